import CowatchCore
import CowatchTime
import Foundation
import Logging

/// Rooms in PostgreSQL, for a cluster of nodes sharing one database (docs/cluster.md).
/// Keeps what the SQLite store keeps, in the same shape, written the same way: the
/// service thread queues changes, a writer thread of its own applies them in
/// batches, one transaction each. A database outage is survived: the batch is
/// kept, the writer reconnects with a growing delay and applies it once the
/// database is back (queued changes are bounded; beyond the bound the oldest are
/// dropped and counted).
///
/// Fencing: in a cluster, every room written must be owned by this node under the
/// lease epoch the gateway set with `own(_:epoch:)`. Each batch locks the rooms'
/// lease rows and compares; a room whose lease has moved on (another node took it
/// while this one was paused or cut off) is not written, and `onFenced` says so.
public final class PostgresStore: RoomStore, @unchecked Sendable {
    public static let schemaVersion = 1
    static let migrations: [String] = [
        """
        CREATE TABLE rooms (name text PRIMARY KEY, snapshot text NOT NULL);
        CREATE TABLE members (room text NOT NULL, id text NOT NULL, record text NOT NULL, PRIMARY KEY (room, id));
        CREATE TABLE chat (room text NOT NULL, number bigserial PRIMARY KEY, line text NOT NULL);
        CREATE INDEX chat_by_room ON chat (room, number);
        CREATE TABLE meta (key text PRIMARY KEY, value text NOT NULL);
        CREATE TABLE room_leases (room text PRIMARY KEY, node text NOT NULL, epoch bigint NOT NULL,
                                  expires_at timestamptz NOT NULL, seq_ceiling bigint NOT NULL DEFAULT 0);
        CREATE TABLE cluster_nodes (node text PRIMARY KEY, url text NOT NULL, seen_at timestamptz NOT NULL);
        """,
    ]

    public let url: String
    public let node: String
    private let logger: Logger
    private let chatLimit: Int
    /// Bytes of stored chat lines (as JSON) a room keeps, besides `chatLimit` lines.
    private let chatBytes: Int
    private let fencing: Bool
    private let maximumQueued: Int
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()
    /// The writer's connection; `nil` while the database is away.
    private var connection: PostgresConnection?

    // Shared with the writer thread, behind `condition`.
    private let condition = NSCondition()
    private var queue: [StoreChange] = []
    private var applying = false
    private var closing = false
    private var failures = 0
    private var droppedChanges = 0
    private var outage = false
    private var epochs: [RoomName: Int64] = [:]
    private var writeSeconds: [Double] = []
    /// A room whose writes were refused because its lease moved on from the epoch
    /// this node held; called on the writer thread.
    public var onFenced: (@Sendable (RoomName, Int64) -> Void)?

    /// Connects, and brings the schema up to date (one node at a time, under an
    /// advisory lock). Throws a `StoreError` a person can act on.
    /// `chatBytes`: the text a room's chat may hold (`chat-history-bytes`); the
    /// store keeps twice that of JSON, which wraps each line in its name, id and time.
    public init(url: String, node: String, fencing: Bool, chatLimit: Int = 200, chatBytes: Int = 32 * 1024,
                maximumQueued: Int = 100_000, logger: Logger = Logger(label: "cowatch.store")) throws {
        self.url = url
        self.node = node
        self.fencing = fencing
        self.chatLimit = chatLimit
        self.chatBytes = 2 * chatBytes
        self.maximumQueued = maximumQueued
        self.logger = logger
        do {
            connection = try PostgresConnection(url: url)
        } catch {
            throw StoreError.unreadable(path: Self.redacted(url), reason: "\(error)")
        }
        try migrate()
        let thread = Thread { [self] in writeLoop() }
        thread.name = "cowatch-postgres"
        thread.start()
    }

    /// The URL without its password, for messages.
    public static func redacted(_ url: String) -> String {
        guard let at = url.firstIndex(of: "@"), let scheme = url.range(of: "://"),
              let colon = url[scheme.upperBound..<at].firstIndex(of: ":") else { return url }
        return String(url[..<colon]) + ":***" + String(url[at...])
    }

    private func migrate() throws {
        guard let connection else { return }
        do {
            try connection.execute("SELECT pg_advisory_lock(7480)")
            defer { try? connection.execute("SELECT pg_advisory_unlock(7480)") }
            try connection.execute("CREATE TABLE IF NOT EXISTS cowatch_schema (version integer NOT NULL)")
            let found = Int(try connection.query("SELECT max(version) FROM cowatch_schema").first?.first??.description ?? "0") ?? 0
            guard found <= Self.schemaVersion else {
                throw StoreError.newerSchema(path: Self.redacted(url), found: found, supported: Self.schemaVersion)
            }
            for version in found..<Self.schemaVersion {
                try connection.transaction {
                    try connection.execute(Self.migrations[version])
                    try connection.query("INSERT INTO cowatch_schema (version) VALUES ($1)", [String(version + 1)])
                }
                logger.info("store migrated", metadata: ["database": "\(Self.redacted(url))", "version": "\(version + 1)"])
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.unreadable(path: Self.redacted(url), reason: "\(error)")
        }
    }

    // MARK: - Ownership, for fencing

    /// This node owns `room` under `epoch`: its writes go through while the lease
    /// row still says so.
    public func own(_ room: RoomName, epoch: Int64) {
        condition.withLock { epochs[room] = epoch }
    }

    /// This node no longer owns `room`: its queued and future writes are dropped.
    public func disown(_ room: RoomName) {
        condition.withLock { epochs[room] = nil }
    }

    // MARK: - RoomStore

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

    /// What every node shares at start: the operator's state (no rooms: each is
    /// loaded by the node that takes it).
    public func loadShared() throws -> StoredRooms {
        try reading { connection in StoredRooms(rooms: [], lastAlive: nil, serverState: try loadServerState(using: connection)) }
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

    public func write(_ changes: [StoreChange]) {
        guard !changes.isEmpty else { return }
        condition.lock()
        queue.append(contentsOf: changes)
        if queue.count > maximumQueued {
            let excess = queue.count - maximumQueued
            queue.removeFirst(excess)
            droppedChanges += excess
        }
        condition.signal()
        condition.unlock()
    }

    /// Waits until every queued change is applied; during an outage, at most 10 s.
    public func flush() {
        condition.lock()
        let deadline = Date().addingTimeInterval(10)
        // Woken at least every 0.2 s to see whether an outage has outlasted the deadline.
        while (!queue.isEmpty || applying) && !(outage && Date() > deadline) {
            _ = condition.wait(until: Date().addingTimeInterval(0.2))
        }
        condition.unlock()
    }

    public func close() {
        flush()
        condition.lock()
        closing = true
        condition.broadcast()
        condition.unlock()
    }

    public var failedWrites: Int { condition.withLock { failures } }
    public var pendingChanges: Int { condition.withLock { queue.count + (applying ? 1 : 0) } }

    /// For /metrics: changes dropped during an outage, whether the database is
    /// away now, and the durations of the batches written since the last call.
    public func takeStatistics() -> (dropped: Int, outage: Bool, writeSeconds: [Double]) {
        condition.withLock {
            defer { writeSeconds.removeAll() }
            return (droppedChanges, outage, writeSeconds)
        }
    }

    private func writeLoop() {
        var delay = 0.2
        while true {
            condition.lock()
            while queue.isEmpty && !closing { condition.wait() }
            if queue.isEmpty && closing {
                condition.unlock()
                connection?.close()
                return
            }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            applying = true
            let owned = epochs
            condition.unlock()

            let started = Date()
            let outcome = apply(batch, owned: owned)
            let seconds = Date().timeIntervalSince(started)

            condition.lock()
            applying = false
            switch outcome {
            case .written(let refused):
                // Rooms this node had given up are expected to be refused; only a
                // lease that moved on under an epoch still held is news.
                let fenced = refused.filter { room in owned[room] != nil && epochs[room] == owned[room] }
                if outage { logger.notice("database back; writes resumed", metadata: ["database": "\(Self.redacted(url))"]) }
                outage = false
                delay = 0.2
                writeSeconds.append(seconds)
                if writeSeconds.count > 10_000 { writeSeconds.removeFirst(5_000) }
                for room in fenced { epochs[room] = nil }
                condition.broadcast()
                condition.unlock()
                for room in fenced { if let epoch = owned[room] { onFenced?(room, epoch) } }
            case .refused:
                failures += 1
                condition.broadcast()
                condition.unlock()
            case .databaseAway(let error):
                if !outage {
                    failures += 1
                    logger.error("database unreachable; writes wait for it",
                                 metadata: ["database": "\(Self.redacted(url))", "error": "\(error)"])
                }
                outage = true
                // The batch goes back in front, to be applied once the database is back.
                queue.insert(contentsOf: batch, at: 0)
                condition.broadcast()
                condition.unlock()
                Thread.sleep(forTimeInterval: delay)
                delay = min(delay * 2, 5)
                if closing { condition.withLock { droppedChanges += queue.count; queue.removeAll() } }
            }
        }
    }

    private enum Outcome {
        case written(fenced: Set<RoomName>)
        case refused
        case databaseAway(String)
    }

    private func apply(_ batch: [StoreChange], owned: [RoomName: Int64]) -> Outcome {
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
