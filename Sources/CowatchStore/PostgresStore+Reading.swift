import CowatchCore
import CowatchTime
import Foundation

/// What the store reads back: every room at start, or the shared state and one
/// room at a time in a cluster.
extension PostgresStore {
    public func load() throws -> StoredRooms {
        flush()
        return try reading { connection in
            var members: [String: [MemberRecord]] = [:]
            for row in try connection.query("SELECT room, record FROM members") {
                guard let room = row[0], let json = row[1] else { continue }
                members[room, default: []].append(try decoder.decode(MemberRecord.self, from: Data(json.utf8)))
            }
            var chat: [String: [ChatLine]] = [:]
            for row in try connection.query("SELECT room, line FROM chat ORDER BY number") {
                guard let room = row[0], let json = row[1] else { continue }
                chat[room, default: []].append(try decoder.decode(ChatLine.self, from: Data(json.utf8)))
            }
            var rooms: [StoredRooms.Room] = []
            for row in try connection.query("SELECT name, snapshot FROM rooms ORDER BY name") {
                guard let name = row[0], let json = row[1] else { continue }
                rooms.append(StoredRooms.Room(snapshot: try decoder.decode(RoomSnapshot.self, from: Data(json.utf8)),
                                              members: members[name] ?? [],
                                              chat: Array((chat[name] ?? []).suffix(chatLimit))))
            }
            let alive = try connection.query("SELECT value FROM meta WHERE key = $1", ["alive." + node]).first?.first ?? nil
            var serverState: [String: String] = [:]
            for row in try connection.query("SELECT key, value FROM meta WHERE key LIKE 'server.%'") {
                guard let key = row[0], let value = row[1] else { continue }
                serverState[String(key.dropFirst("server.".count))] = value
            }
            return StoredRooms(rooms: rooms, lastAlive: alive.flatMap { Int64($0) }.map(ServerInstant.init(milliseconds:)),
                               serverState: serverState)
        }
    }

    /// What every node shares at start: the operator's state, the cluster's and
    /// each node's (no rooms: each is
    /// loaded by the node that takes it).
    public func loadShared() throws -> StoredRooms {
        try reading { connection in
            StoredRooms(rooms: [], lastAlive: nil, serverState: try loadServerState(using: connection),
                        sharedOperator: try Self.readSharedOperatorState(using: connection))
        }
    }

    /// One room as kept, for a node taking it over; nil when the database has none.
    func loadRoom(_ name: RoomName, using connection: PostgresConnection) throws -> StoredRooms.Room? {
        guard let json = try connection.query("SELECT snapshot FROM rooms WHERE name = $1", [name.rawValue]).first?.first ?? nil
        else { return nil }
        let members = try connection.query("SELECT record FROM members WHERE room = $1", [name.rawValue]).compactMap { row in
            try row[0].map { try decoder.decode(MemberRecord.self, from: Data($0.utf8)) }
        }
        let chat = try connection.query("SELECT line FROM chat WHERE room = $1 ORDER BY number DESC LIMIT $2",
                                         [name.rawValue, String(chatLimit)]).compactMap { row in
            try row[0].map { try decoder.decode(ChatLine.self, from: Data($0.utf8)) }
        }
        return StoredRooms.Room(snapshot: try decoder.decode(RoomSnapshot.self, from: Data(json.utf8)),
                                members: members, chat: chat.reversed())
    }

    /// The operator's state, shared by every node.
    func loadServerState(using connection: PostgresConnection) throws -> [String: String] {
        var serverState: [String: String] = [:]
        for row in try connection.query("SELECT key, value FROM meta WHERE key LIKE 'server.%'") {
            guard let key = row[0], let value = row[1] else { continue }
            serverState[String(key.dropFirst("server.".count))] = value
        }
        return serverState
    }

    private func reading<T>(_ work: (PostgresConnection) throws -> T) throws -> T {
        condition.lock()
        defer { condition.unlock() }
        do {
            if connection?.isOpen != true { connection = try PostgresConnection(url: url) }
            guard let connection else { throw StoreError.unreadable(path: Self.redacted(url), reason: "not connected") }
            return try work(connection)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.unreadable(path: Self.redacted(url), reason: "\(error)")
        }
    }
}
