import CowatchCore
import Foundation
import Logging

/// One batch applied in one transaction: the fencing check, then the rows.
extension PostgresStore {
    enum Outcome {
        case written(fenced: Set<RoomName>)
        case refused
        case databaseAway(String)
    }

    func apply(_ batch: [StoreChange], owned: [RoomName: Int64]) -> Outcome {
        do {
            if connection?.isOpen != true {
                connection?.close()
                connection = try PostgresConnection(url: url)
            }
            guard let connection else { return .databaseAway("not connected") }
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
        } catch {
            logger.error("store write failed", metadata: ["changes": "\(batch.count)", "error": "\(error)"])
            return .refused
        }
    }

    /// The rooms of the batch this node may not write: in a cluster, those whose
    /// lease row (locked until the transaction ends) names another node or epoch.
    private func fence(_ batch: [StoreChange], owned: [RoomName: Int64],
                       _ connection: PostgresConnection) throws -> Set<RoomName> {
        guard fencing else { return [] }
        var rooms: Set<RoomName> = []
        for change in batch {
            switch change {
            case .room(let snapshot): rooms.insert(snapshot.room)
            case .member(let room, _), .forgetMember(let room, _), .chat(let room, _), .forgetRoom(let room): rooms.insert(room)
            case .alive, .serverState: break
            }
        }
        var refused: Set<RoomName> = []
        for room in rooms {
            guard let epoch = owned[room] else {
                refused.insert(room)
                continue
            }
            let row = try connection.query("SELECT node, epoch FROM room_leases WHERE room = $1 FOR SHARE", [room.rawValue]).first
            if row?[0] != node || row?[1] != String(epoch) { refused.insert(room) }
        }
        return refused
    }

    private func write(_ batch: [StoreChange], skipping refused: Set<RoomName>, _ connection: PostgresConnection) throws {
        var latestSnapshot: [RoomName: Int] = [:]
        for (index, change) in batch.enumerated() {
            if case .room(let snapshot) = change { latestSnapshot[snapshot.room] = index }
        }
        var chattedRooms: Set<RoomName> = []
        for (index, change) in batch.enumerated() {
            switch change {
            case .room(let snapshot):
                guard latestSnapshot[snapshot.room] == index, !refused.contains(snapshot.room) else { continue }
                try connection.query("""
                    INSERT INTO rooms (name, snapshot) VALUES ($1, $2)
                    ON CONFLICT (name) DO UPDATE SET snapshot = EXCLUDED.snapshot
                    """, [snapshot.room.rawValue, try json(snapshot)])
            case .member(let room, let record):
                guard !refused.contains(room) else { continue }
                try connection.query("""
                    INSERT INTO members (room, id, record) VALUES ($1, $2, $3)
                    ON CONFLICT (room, id) DO UPDATE SET record = EXCLUDED.record
                    """, [room.rawValue, record.id.rawValue, try json(record)])
            case .forgetMember(let room, let id):
                guard !refused.contains(room) else { continue }
                try connection.query("DELETE FROM members WHERE room = $1 AND id = $2", [room.rawValue, id.rawValue])
            case .chat(let room, let line):
                guard !refused.contains(room) else { continue }
                try connection.query("INSERT INTO chat (room, line) VALUES ($1, $2)", [room.rawValue, try json(line)])
                chattedRooms.insert(room)
            case .forgetRoom(let room):
                guard !refused.contains(room) else { continue }
                try connection.query("DELETE FROM rooms WHERE name = $1", [room.rawValue])
                try connection.query("DELETE FROM members WHERE room = $1", [room.rawValue])
                try connection.query("DELETE FROM chat WHERE room = $1", [room.rawValue])
                if fencing { try connection.query("DELETE FROM room_leases WHERE room = $1 AND node = $2", [room.rawValue, node]) }
            case .alive(let instant):
                try connection.query("""
                    INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
                    """, ["alive." + node, String(instant.milliseconds)])
            case .serverState(let name, let json):
                try connection.query("""
                    INSERT INTO meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
                    """, ["server." + name, json])
            }
        }
        for room in chattedRooms {
            try connection.query("""
                DELETE FROM chat WHERE room = $1 AND number <= (
                  SELECT number FROM chat WHERE room = $1 ORDER BY number DESC LIMIT 1 OFFSET $2)
                """, [room.rawValue, String(chatLimit)])
            try connection.query("""
                DELETE FROM chat WHERE room = $1 AND number <= (
                  SELECT number FROM (
                    SELECT number, SUM(octet_length(line)) OVER (ORDER BY number DESC) AS total
                    FROM chat WHERE room = $1) AS newest
                  WHERE total > $2 ORDER BY number DESC LIMIT 1)
                """, [room.rawValue, String(chatBytes)])
        }
    }

    private func json<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
