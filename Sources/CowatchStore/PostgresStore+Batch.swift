import CowatchCore
import Foundation
import Logging

/// One batch applied in one statement (`writeStatement`, prepared once per
/// connection): the fencing check and every kind of change of the whole batch, as
/// data-modifying parts of one query, so that a batch costs the database one
/// round trip, one parse-free execution and one commit, not a transaction of a
/// statement per room and per member. (A batch that forgets a room, which is
/// rare, runs that first, in a transaction with the same statement after it.)
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
                return .written(fenced: try write(batch, owned: owned, connection))
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

    /// The fencing check of a batch that forgets a room: every room's lease row
    /// that names this node under the epoch it holds, locked in the order of
    /// room names until the transaction ends (`FOR UPDATE`: the forgetting deletes
    /// the row, and a lock taken whole is never upgraded while another
    /// transaction waits for it). $1: the node; $2: room to epoch.
    static let fenceStatement = """
        SELECT l.room FROM room_leases l, jsonb_each_text($2::jsonb) AS f
        WHERE l.room = f.key AND l.node = $1 AND l.epoch = f.value::bigint
        ORDER BY l.room FOR UPDATE OF l
        """

    /// A whole batch in one statement. $1: the node; $2: whether rooms are fenced;
    /// $3: room to the epoch this node holds it under; $4: room to snapshot; $5:
    /// members gone, [room, id]; $6: members kept, [room, id, record]; $7: chat
    /// lines in order, [room, line]; $8: room to [existing lines kept, their bytes
    /// kept], the room's chat bounds less what the batch adds; $9: key to value
    /// of the node's own state. Returns the rooms the lease check let through.
    ///
    /// The check locks the rooms' lease rows in the order of room names (as the
    /// heartbeat does, `PostgresLeases.renewStatement`), so a takeover's update
    /// of one waits until this commits, or, done first, makes the check fail on
    /// the row's new version (read committed re-checks a locked row): a write
    /// lands before a takeover, whose node then loads it, or not at all.
    static let writeStatement = """
        WITH fence AS (
          SELECT l.room FROM room_leases l, jsonb_each_text($3::jsonb) AS f
          WHERE $2::boolean AND l.room = f.key AND l.node = $1 AND l.epoch = f.value::bigint
          ORDER BY l.room FOR UPDATE OF l),
        snapshots AS (
          INSERT INTO rooms (name, snapshot)
          SELECT s.key, s.value FROM jsonb_each_text($4::jsonb) AS s
          WHERE NOT $2::boolean OR s.key IN (SELECT room FROM fence)
          ON CONFLICT (name) DO UPDATE SET snapshot = EXCLUDED.snapshot
          RETURNING 1),
        gone AS (
          DELETE FROM members m USING jsonb_array_elements($5::jsonb) AS g
          WHERE m.room = g.value->>0 AND m.id = g.value->>1
            AND (NOT $2::boolean OR m.room IN (SELECT room FROM fence))
          RETURNING 1),
        kept AS (
          INSERT INTO members (room, id, record)
          SELECT k.value->>0, k.value->>1, k.value->>2 FROM jsonb_array_elements($6::jsonb) AS k
          WHERE NOT $2::boolean OR k.value->>0 IN (SELECT room FROM fence)
          ON CONFLICT (room, id) DO UPDATE SET record = EXCLUDED.record
          RETURNING 1),
        said AS (
          INSERT INTO chat (room, line)
          SELECT c.value->>0, c.value->>1 FROM jsonb_array_elements($7::jsonb) WITH ORDINALITY AS c
          WHERE NOT $2::boolean OR c.value->>0 IN (SELECT room FROM fence)
          ORDER BY c.ordinality
          RETURNING 1),
        trimmed AS (
          DELETE FROM chat c USING (
            SELECT r.number FROM (
              SELECT number, room, row_number() OVER newest AS rank, SUM(octet_length(line)) OVER newest AS total
              FROM chat WHERE room IN (SELECT key FROM jsonb_each($8::jsonb))
              WINDOW newest AS (PARTITION BY room ORDER BY number DESC)) AS r
            JOIN jsonb_each($8::jsonb) AS t ON t.key = r.room
            WHERE (NOT $2::boolean OR r.room IN (SELECT room FROM fence))
              AND (r.rank > (t.value->>0)::bigint OR r.total > (t.value->>1)::bigint)) AS old
          WHERE c.number = old.number
          RETURNING 1),
        node AS (
          INSERT INTO meta (key, value) SELECT key, value FROM jsonb_each_text($9::jsonb)
          ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
          RETURNING 1)
        SELECT room FROM fence
        """

    /// What a batch leaves in the database, row by row: the last word on each row
    /// wins, and a room forgotten starts over from what follows it.
    struct Net {
        var forgottenRooms: [String] = []
        var snapshots: [String: String] = [:]
        var members: [String: [String: String?]] = [:]
        var chat: [(room: String, line: String)] = []
        var meta: [String: String] = [:]
    }

    func net(_ batch: [StoreChange]) throws -> Net {
        var net = Net()
        for change in batch {
            switch change {
            case .room(let snapshot):
                net.snapshots[snapshot.room.rawValue] = try json(snapshot)
            case .member(let room, let record):
                net.members[room.rawValue, default: [:]][record.id.rawValue] = .some(try json(record))
            case .forgetMember(let room, let id):
                net.members[room.rawValue, default: [:]][id.rawValue] = .some(nil)
            case .chat(let room, let line):
                net.chat.append((room.rawValue, try json(line)))
            case .forgetRoom(let room):
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

    /// Writes a batch; returns its rooms the lease check refused.
    private func write(_ batch: [StoreChange], owned: [RoomName: Int64], _ connection: PostgresConnection) throws -> Set<RoomName> {
        let net = try net(batch)
        let rooms = Self.rooms(of: batch)
        var epochs: [String: Int64] = [:]
        for room in rooms { if let epoch = owned[room] { epochs[room.rawValue] = epoch } }
        let parameters = try writeParameters(net, epochs: epochs)
        func refused(_ passed: [[String?]]) -> Set<RoomName> {
            guard fencing else { return [] }
            let through = Set(passed.compactMap { $0.first ?? nil })
            return Set(rooms.filter { !through.contains($0.rawValue) })
        }
        guard !net.forgottenRooms.isEmpty else {
            return refused(try connection.queryPrepared(Self.writeStatement, parameters))
        }
        return try connection.transaction {
            var forgotten = net.forgottenRooms
            if fencing {
                let through = Set(try connection.query(Self.fenceStatement, [node, try json(epochs)]).compactMap { $0.first ?? nil })
                forgotten = forgotten.filter(through.contains)
            }
            if !forgotten.isEmpty {
                let names = try json(forgotten)
                try connection.query("DELETE FROM rooms WHERE name IN (SELECT jsonb_array_elements_text($1::jsonb))", [names])
                try connection.query("DELETE FROM members WHERE room IN (SELECT jsonb_array_elements_text($1::jsonb))", [names])
                try connection.query("DELETE FROM chat WHERE room IN (SELECT jsonb_array_elements_text($1::jsonb))", [names])
                if fencing {
                    try connection.query("""
                        DELETE FROM room_leases WHERE node = $2 AND room IN (SELECT jsonb_array_elements_text($1::jsonb))
                        """, [names, node])
                }
            }
            return refused(try connection.queryPrepared(Self.writeStatement, parameters))
        }
    }

    /// The statement's parameters for `net`. New chat lines beyond a room's
    /// bounds are left out here (the newest kept), and the room's existing lines
    /// are trimmed to what the bounds leave beside the new ones, so that the
    /// statement, whose parts all see the rows as they were before it, leaves
    /// each room's newest `chatLimit` lines within `chatBytes`.
    private func writeParameters(_ net: Net, epochs: [String: Int64]) throws -> [String?] {
        var gone: [[String]] = []
        var kept: [[String]] = []
        for (room, records) in net.members.sorted(by: { $0.key < $1.key }) {
            for (id, record) in records.sorted(by: { $0.key < $1.key }) {
                if let record { kept.append([room, id, record]) } else { gone.append([room, id]) }
            }
        }
        var lines: [String: (count: Int, bytes: Int)] = [:]
        var chat: [[String]] = []
        for line in net.chat.reversed() {
            let used = lines[line.room, default: (0, 0)]
            let bytes = line.line.utf8.count
            guard used.count < chatLimit, used.bytes + bytes <= chatBytes else { continue }
            lines[line.room] = (used.count + 1, used.bytes + bytes)
            chat.append([line.room, line.line])
        }
        chat.reverse()
        var trims: [String: [Int]] = [:]
        for (room, used) in lines { trims[room] = [chatLimit - used.count, chatBytes - used.bytes] }
        return [node, fencing ? "true" : "false", try json(epochs), try json(net.snapshots), try json(gone), try json(kept),
                try json(chat), try json(trims), try json(net.meta)]
    }

    func json<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
