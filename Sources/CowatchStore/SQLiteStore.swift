import CowatchCore
import CowatchTime
import Foundation
import Logging

/// The embedded default: one SQLite file in WAL mode, written by a thread of its
/// own. Changes are queued by the service thread and applied in batches, one
/// transaction each, keeping only the newest snapshot of a room per batch.
public final class SQLiteStore: RoomStore, @unchecked Sendable {
    /// The schema this binary writes; each step of `migrations` brings a database
    /// one version further.
    public static let schemaVersion = 1
    static let migrations: [String] = [
        """
        CREATE TABLE rooms (name TEXT PRIMARY KEY, snapshot TEXT NOT NULL);
        CREATE TABLE members (room TEXT NOT NULL, id TEXT NOT NULL, record TEXT NOT NULL, PRIMARY KEY (room, id));
        CREATE TABLE chat (room TEXT NOT NULL, number INTEGER PRIMARY KEY AUTOINCREMENT, line TEXT NOT NULL);
        CREATE INDEX chat_by_room ON chat (room, number);
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        """,
    ]

    public let path: String
    private let logger: Logger
    private let chatLimit: Int
    /// Bytes of stored chat lines (as JSON) a room keeps, besides `chatLimit` lines.
    private let chatBytes: Int
    private let database: SQLiteDatabase
    private let lock: DataDirectoryLock
    private let encoder = JSONEncoder()
    private let decoder = JSONDecoder()

    // Shared with the writer thread, behind `condition`.
    private let condition = NSCondition()
    private var queue: [StoreChange] = []
    private var applying = false
    private var closing = false
    private var failures = 0

    /// Opens (creating when missing) `directory/cowatch.sqlite` and brings its
    /// schema up to date. Throws a `StoreError` a person can act on.
    /// `chatBytes`: the text a room's chat may hold (`chat-history-bytes`); the
    /// store keeps twice that of JSON, which wraps each line in its name, id and time.
    public init(directory: String, chatLimit: Int = 200, chatBytes: Int = 32 * 1024,
                logger: Logger = Logger(label: "cowatch.store")) throws {
        self.path = directory + "/cowatch.sqlite"
        self.logger = logger
        self.chatLimit = chatLimit
        self.chatBytes = 2 * chatBytes
        do {
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        } catch {
            throw StoreError.unreadable(path: directory, reason: "cannot create the data directory (\(error.localizedDescription))")
        }
        lock = try DataDirectoryLock(directory: directory)
        do {
            database = try SQLiteDatabase(path: path)
            try database.execute("PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA foreign_keys=ON;")
        } catch {
            throw StoreError.unreadable(path: path, reason: "\(error)")
        }
        try migrate()
        let thread = Thread { [self] in writeLoop() }
        thread.name = "cowatch-store"
        // Not kept: a running thread keeps itself, and its closure keeps the store
        // until `close()` ends the loop.
        thread.start()
    }

    private func migrate() throws {
        let found: Int
        do {
            found = Int(try database.run("PRAGMA user_version").first?.first??.description ?? "0") ?? 0
        } catch {
            throw StoreError.unreadable(path: path, reason: "\(error)")
        }
        guard found <= Self.schemaVersion else {
            throw StoreError.newerSchema(path: path, found: found, supported: Self.schemaVersion)
        }
        for version in found..<Self.schemaVersion {
            do {
                try database.execute("BEGIN IMMEDIATE")
                try database.execute(Self.migrations[version])
                try database.execute("PRAGMA user_version = \(version + 1)")
                try database.execute("COMMIT")
                logger.info("store migrated", metadata: ["path": "\(path)", "version": "\(version + 1)"])
            } catch {
                try? database.execute("ROLLBACK")
                throw StoreError.unreadable(path: path, reason: "migration to version \(version + 1) failed: \(error)")
            }
        }
    }

    public func load() throws -> StoredRooms {
        flush()
        condition.lock()
        defer { condition.unlock() }
        do {
            var members: [String: [MemberRecord]] = [:]
            for row in try database.run("SELECT room, record FROM members") {
                guard let room = row[0], let json = row[1] else { continue }
                members[room, default: []].append(try decoder.decode(MemberRecord.self, from: Data(json.utf8)))
            }
            var chat: [String: [ChatLine]] = [:]
            for row in try database.run("SELECT room, line FROM chat ORDER BY number") {
                guard let room = row[0], let json = row[1] else { continue }
                chat[room, default: []].append(try decoder.decode(ChatLine.self, from: Data(json.utf8)))
            }
            var rooms: [StoredRooms.Room] = []
            for row in try database.run("SELECT name, snapshot FROM rooms ORDER BY name") {
                guard let name = row[0], let json = row[1] else { continue }
                let snapshot = try decoder.decode(RoomSnapshot.self, from: Data(json.utf8))
                rooms.append(StoredRooms.Room(snapshot: snapshot, members: members[name] ?? [],
                                              chat: Array((chat[name] ?? []).suffix(chatLimit))))
            }
            let alive = try database.run("SELECT value FROM meta WHERE key = 'alive'").first?.first??.description
            var serverState: [String: String] = [:]
            for row in try database.run("SELECT key, value FROM meta WHERE key LIKE 'server.%'") {
                guard let key = row[0], let value = row[1] else { continue }
                serverState[String(key.dropFirst("server.".count))] = value
            }
            return StoredRooms(rooms: rooms, lastAlive: alive.flatMap { Int64($0) }.map(ServerInstant.init(milliseconds:)),
                               serverState: serverState)
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.unreadable(path: path, reason: "\(error)")
        }
    }

    public func write(_ changes: [StoreChange]) {
        guard !changes.isEmpty else { return }
        condition.lock()
        queue.append(contentsOf: changes)
        condition.signal()
        condition.unlock()
    }

    public func flush() {
        condition.lock()
        while !queue.isEmpty || applying { condition.wait() }
        condition.unlock()
    }

    public func close() {
        flush()
        condition.lock()
        let wasClosing = closing
        closing = true
        condition.broadcast()
        condition.unlock()
        if !wasClosing { lock.release() }
    }

    public var failedWrites: Int {
        condition.lock()
        defer { condition.unlock() }
        return failures
    }

    public var pendingChanges: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count + (applying ? 1 : 0)
    }

    private func writeLoop() {
        while true {
            condition.lock()
            while queue.isEmpty && !closing { condition.wait() }
            if queue.isEmpty && closing {
                condition.unlock()
                database.close()
                return
            }
            let batch = queue
            queue.removeAll(keepingCapacity: true)
            applying = true
            condition.unlock()

            let failed = apply(batch)

            condition.lock()
            applying = false
            if failed { failures += 1 }
            condition.broadcast()
            condition.unlock()
        }
    }

    /// Applies a batch in one transaction; true when it failed (and was rolled back).
    private func apply(_ batch: [StoreChange]) -> Bool {
        // Only the newest snapshot of each room in a batch needs writing.
        var latestSnapshot: [RoomName: Int] = [:]
        for (index, change) in batch.enumerated() {
            if case .room(let snapshot) = change { latestSnapshot[snapshot.room] = index }
        }
        var chattedRooms: Set<RoomName> = []
        do {
            try database.execute("BEGIN")
            for (index, change) in batch.enumerated() {
                switch change {
                case .room(let snapshot):
                    guard latestSnapshot[snapshot.room] == index else { continue }
                    try database.run("INSERT OR REPLACE INTO rooms (name, snapshot) VALUES (?, ?)",
                                     [.text(snapshot.room.rawValue), .text(try json(snapshot))])
                case .member(let room, let record):
                    try database.run("INSERT OR REPLACE INTO members (room, id, record) VALUES (?, ?, ?)",
                                     [.text(room.rawValue), .text(record.id.rawValue), .text(try json(record))])
                case .forgetMember(let room, let id):
                    try database.run("DELETE FROM members WHERE room = ? AND id = ?", [.text(room.rawValue), .text(id.rawValue)])
                case .chat(let room, let line):
                    try database.run("INSERT INTO chat (room, line) VALUES (?, ?)", [.text(room.rawValue), .text(try json(line))])
                    chattedRooms.insert(room)
                case .forgetRoom(let room):
                    for table in ["rooms WHERE name", "members WHERE room", "chat WHERE room"] {
                        try database.run("DELETE FROM \(table) = ?", [.text(room.rawValue)])
                    }
                case .alive(let instant):
                    try database.run("INSERT OR REPLACE INTO meta (key, value) VALUES ('alive', ?)",
                                     [.text(String(instant.milliseconds))])
                case .serverState(let name, let json):
                    try database.run("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)",
                                     [.text("server." + name), .text(json)])
                }
            }
            for room in chattedRooms {
                try database.run("""
                    DELETE FROM chat WHERE room = ?1 AND number <= (
                      SELECT number FROM chat WHERE room = ?1 ORDER BY number DESC LIMIT 1 OFFSET ?2)
                    """, [.text(room.rawValue), .integer(Int64(chatLimit))])
                // Then by bytes: every line from the one that takes the newest lines'
                // total past the budget, back.
                try database.run("""
                    DELETE FROM chat WHERE room = ?1 AND number <= (
                      SELECT number FROM (
                        SELECT number, SUM(LENGTH(CAST(line AS BLOB))) OVER (ORDER BY number DESC) AS total
                        FROM chat WHERE room = ?1)
                      WHERE total > ?2 ORDER BY number DESC LIMIT 1)
                    """, [.text(room.rawValue), .integer(Int64(chatBytes))])
            }
            try database.execute("COMMIT")
            return false
        } catch {
            try? database.execute("ROLLBACK")
            logger.error("store write failed", metadata: ["path": "\(path)", "changes": "\(batch.count)", "error": "\(error)"])
            return true
        }
    }

    private func json<Value: Encodable>(_ value: Value) throws -> String {
        String(decoding: try encoder.encode(value), as: UTF8.self)
    }
}
