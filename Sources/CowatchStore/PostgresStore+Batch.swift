import CowatchCore
import Foundation
import Logging

/// One batch applied in one transaction: the fencing check, then the rows, each
/// kind of change in one statement for the whole batch (a round trip per kind,
/// not per room or per member).
///
/// Row locks on `room_leases` are taken in one order everywhere: by room name.
/// The fencing check locks every room of the batch in one statement sorted by
/// room, and the lease heartbeat (`PostgresLeases`) locks a node's leases sorted
/// the same way, so the two never wait on each other in a circle. A deadlock or a
/// serialization failure that happens all the same (40P01, 40001) is the database
/// answering, not the database away: the batch is tried again as it was.
extension PostgresStore {
    enum Outcome {
        case written(fenced: Set<RoomName>)
        case refused
        case databaseAway(String)
        /// The batch kept losing races with other transactions: it goes back in
        /// front of the queue, and the database is not counted away.
        case retryLater
    }

    /// How many times a batch that lost a race (a deadlock, a serialization
    /// failure) is tried again before it waits in the queue for the next round.
    static let conflictRetries = 5

    func apply(_ batch: [StoreChange], owned: [RoomName: Int64]) -> Outcome {
        var attempt = 0
        while true {
            do {
                if connection?.isOpen != true {
                    connection?.close()
                    connection = try PostgresConnection(url: url)
                }
                guard let connection else { return .databaseAway("not connected") }
                connection.afterStatement = afterStatement
                let fenced = try connection.transaction { () -> Set<RoomName> in
                    let refused = try fence(batch, owned: owned, connection)
                    try write(batch, skipping: refused, connection)
                    return refused
                }
                return .written(fenced: fenced)
            } catch let failure as PostgresConnection.Failure where failure.connectionLost {
                connection?.close()
                connection = nil
                return .databaseAway(failure.description)
            } catch let failure as PostgresConnection.Failure where failure.isConflict {
                attempt += 1
                conflictsSeen += 1
                guard attempt <= Self.conflictRetries else {
                    logger.warning("store write lost to other transactions repeatedly; it waits for the next round",
                                   metadata: ["changes": "\(batch.count)", "error": "\(failure)"])
                    return .retryLater
                }
                // A moment apart, longer each time, so that the other transaction ends first.
                Thread.sleep(forTimeInterval: 0.005 * Double(attempt))
            } catch {
                logger.error("store write failed", metadata: ["changes": "\(batch.count)", "error": "\(error)"])
                return .refused
            }
        }
    }

    /// The rooms a batch writes (its fencing check's rows), sorted by name: the
    /// order every transaction locks lease rows in.
    static func rooms(of batch: [StoreChange]) -> [RoomName] {
        var rooms: Set<RoomName> = []
        for change in batch {
            switch change {
            case .room(let snapshot): rooms.insert(snapshot.room)
            case .member(let room, _), .forgetMember(let room, _), .chat(let room, _), .forgetRoom(let room): rooms.insert(room)
            case .alive, .serverState: break
            }
        }
        return rooms.sorted { $0.rawValue < $1.rawValue }
    }

    /// The fencing check in one statement: every room's lease row, locked in the
    /// order of room names until the transaction ends (FOR UPDATE: a room forgotten
    /// in the batch deletes its row, and a lock taken whole is never upgraded
    /// while another transaction waits for it).
    static let fenceStatement = """
        SELECT room, node, epoch FROM room_leases
        WHERE room IN (SELECT jsonb_array_elements_text($1::jsonb)) ORDER BY room FOR UPDATE
        """

    /// The rooms of the batch this node may not write: in a cluster, those whose
    /// lease row names another node or epoch, or none.
    private func fence(_ batch: [StoreChange], owned: [RoomName: Int64],
                       _ connection: PostgresConnection) throws -> Set<RoomName> {
        guard fencing else { return [] }
        let rooms = Self.rooms(of: batch)
        guard !rooms.isEmpty else { return [] }
        let rows = try connection.query(Self.fenceStatement, [try json(rooms.map(\.rawValue))])
        var leases: [String: (node: String?, epoch: String?)] = [:]
        for row in rows { if let room = row[0] { leases[room] = (row[1], row[2]) } }
        var refused: Set<RoomName> = []
        for room in rooms {
            guard let epoch = owned[room], let lease = leases[room.rawValue],
                  lease.node == node, lease.epoch == String(epoch) else {
                refused.insert(room)
                continue
            }
        }
        return refused
    }

    /// What a batch leaves in the database, row by row: the last word on each row
    /// wins, and a room forgotten starts over from what follows it.
    struct Net {
        var forgottenRooms: [String] = []
        var snapshots: [String: String] = [:]
        var members: [String: [String: String?]] = [:]
        var chat: [(room: String, line: String)] = []
        var meta: [String: String] = [:]
    }

    func net(_ batch: [StoreChange], skipping refused: Set<RoomName>) throws -> Net {
        var net = Net()
        for change in batch {
            switch change {
            case .room(let snapshot):
                guard !refused.contains(snapshot.room) else { continue }
                net.snapshots[snapshot.room.rawValue] = try json(snapshot)
            case .member(let room, let record):
                guard !refused.contains(room) else { continue }
                net.members[room.rawValue, default: [:]][record.id.rawValue] = .some(try json(record))
            case .forgetMember(let room, let id):
                guard !refused.contains(room) else { continue }
                net.members[room.rawValue, default: [:]][id.rawValue] = .some(nil)
            case .chat(let room, let line):
                guard !refused.contains(room) else { continue }
                net.chat.append((room.rawValue, try json(line)))
            case .forgetRoom(let room):
                guard !refused.contains(room) else { continue }
                let name = room.rawValue
                if !net.forgottenRooms.contains(name) { net.forgottenRooms.append(name) }
                net.snapshots[name] = nil
                net.members[name] = nil
                net.chat.removeAll { $0.room == name }
            case .alive(let instant):
                net.meta["alive." + node] = String(instant.milliseconds)
            case .serverState(let name, let value):
                net.meta["server." + name] = value
            }
        }
        return net
    }

    private func write(_ batch: [StoreChange], skipping refused: Set<RoomName>, _ connection: PostgresConnection) throws {
        let net = try net(batch, skipping: refused)
        if !net.forgottenRooms.isEmpty {
            let rooms = try json(net.forgottenRooms)
            try connection.query("DELETE FROM rooms WHERE name IN (SELECT jsonb_array_elements_text($1::jsonb))", [rooms])
            try connection.query("DELETE FROM members WHERE room IN (SELECT jsonb_array_elements_text($1::jsonb))", [rooms])
            try connection.query("DELETE FROM chat WHERE room IN (SELECT jsonb_array_elements_text($1::jsonb))", [rooms])
            if fencing {
                try connection.query("""
                    DELETE FROM room_leases WHERE node = $2 AND room IN (SELECT jsonb_array_elements_text($1::jsonb))
                    """, [rooms, node])
            }
        }
        if !net.snapshots.isEmpty {
            try connection.query("""
                INSERT INTO rooms (name, snapshot) SELECT key, value FROM jsonb_each_text($1::jsonb)
                ON CONFLICT (name) DO UPDATE SET snapshot = EXCLUDED.snapshot
                """, [try json(net.snapshots)])
        }
        var kept: [[String]] = []
        var gone: [[String]] = []
        for (room, records) in net.members.sorted(by: { $0.key < $1.key }) {
            for (id, record) in records.sorted(by: { $0.key < $1.key }) {
                if let record { kept.append([room, id, record]) } else { gone.append([room, id]) }
            }
        }
        if !gone.isEmpty {
            try connection.query("""
                DELETE FROM members m USING jsonb_array_elements($1::jsonb) AS g
                WHERE m.room = g->>0 AND m.id = g->>1
                """, [try json(gone)])
        }
        if !kept.isEmpty {
            try connection.query("""
                INSERT INTO members (room, id, record) SELECT k->>0, k->>1, k->>2 FROM jsonb_array_elements($1::jsonb) AS k
                ON CONFLICT (room, id) DO UPDATE SET record = EXCLUDED.record
                """, [try json(kept)])
        }
        if !net.chat.isEmpty {
            // In the batch's order: the numbers the lines get keep the order they were said in.
            try connection.query("""
                INSERT INTO chat (room, line)
                SELECT c.value->>0, c.value->>1 FROM jsonb_array_elements($1::jsonb) WITH ORDINALITY AS c ORDER BY c.ordinality
                """, [try json(net.chat.map { [$0.room, $0.line] })])
            // Each room keeps its newest `chatLimit` lines within `chatBytes`, in one
            // statement for every room that chatted.
            var chatted: [String] = []
            for line in net.chat where !chatted.contains(line.room) { chatted.append(line.room) }
            try connection.query("""
                DELETE FROM chat c USING (
                  SELECT number FROM (
                    SELECT number, row_number() OVER newest AS rank, SUM(octet_length(line)) OVER newest AS total
                    FROM chat WHERE room IN (SELECT jsonb_array_elements_text($1::jsonb))
                    WINDOW newest AS (PARTITION BY room ORDER BY number DESC)) AS ranked
                  WHERE rank > $2 OR total > $3) AS old
                WHERE c.number = old.number
                """, [try json(chatted), String(chatLimit), String(chatBytes)])
        }
        if !net.meta.isEmpty {
            try connection.query("""
                INSERT INTO meta (key, value) SELECT key, value FROM jsonb_each_text($1::jsonb)
                ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
                """, [try json(net.meta)])
        }
    }

    func json<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
