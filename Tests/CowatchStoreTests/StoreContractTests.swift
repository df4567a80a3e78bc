@testable import CowatchCore
@testable import CowatchStore
import CowatchTime
import Foundation
import SlashCommands
import Testing

/// The contract every store keeps, run against each implementation.
@Suite("Store contract")
struct StoreContractTests {
    enum Kind: String, CaseIterable, CustomTestStringConvertible {
        case memory, sqlite, postgres
        var testDescription: String { rawValue }
    }

    /// PostgreSQL joins when `commands/test` has started one (COWATCH_TEST_DATABASE_URL).
    static let kinds: [Kind] = TestDatabase.url == nil ? [.memory, .sqlite] : Kind.allCases

    /// A fresh store of the kind, and a function that reopens the same data (for
    /// SQLite, a new store on the same directory; memory has no second life).
    static func make(_ kind: Kind, chatLimit: Int = 200) throws -> (any RoomStore, () throws -> any RoomStore) {
        switch kind {
        case .memory:
            let store = MemoryStore(chatLimit: chatLimit)
            return (store, { store })
        case .sqlite:
            let directory = NSTemporaryDirectory() + "cowatch-store-\(UUID().uuidString)"
            let store = try SQLiteStore(directory: directory, chatLimit: chatLimit)
            return (store, {
                store.close()
                return try SQLiteStore(directory: directory, chatLimit: chatLimit)
            })
        case .postgres:
            let url = try TestDatabase.fresh()
            let store = try PostgresStore(url: url, node: "test", fencing: false, chatLimit: chatLimit)
            return (store, {
                store.close()
                return try PostgresStore(url: url, node: "test", fencing: false, chatLimit: chatLimit)
            })
        }
    }

    static let lobby = RoomName("lobby")!

    static func snapshot(seq: Int64, status: PlaybackStatus = .playing, room: RoomName = lobby) -> RoomSnapshot {
        let url = MediaURL("https://example.org/a.mp4")!
        let state = RoomState(
            seq: seq,
            session: GroupSession(state: .joined, reason: nil,
                                  activity: Activity(id: "a1", url: url, title: "A", identifier: url.text)),
            playback: Playback(status: status, item: url.text, rate: PlaybackRate(1.5)!, position: MediaTime(seconds: 12.5),
                               at: ServerInstant(milliseconds: 1_000), by: MemberID("m1"), cause: .play),
            queue: [QueueItem(id: "q1", url: MediaURL("https://example.org/b.mp4")!, title: "B")],
            policy: RoomPolicy(control: .hosts, stall: .wait, wait: ServerInterval(milliseconds: 2_500)))
        return RoomSnapshot(room: room, state: state, savedAt: ServerInstant(milliseconds: 2_000),
                            nextMemberNumber: 3, nextActivityNumber: 2, nextQueueNumber: 2, itemSeq: 1)
    }

    static func member(_ id: String, name: String, role: Role = .member) -> MemberRecord {
        MemberRecord(id: MemberID(id), name: DisplayName(name)!, role: role, joined: true, joinsNewSessions: true,
                     player: true, autoplay: false, suspensions: [.audioSessionInterrupted], arrival: 1,
                     resumeToken: "token-\(id)")
    }

    static func chat(_ number: Int) -> ChatLine {
        ChatLine(from: MemberID("m1"), name: DisplayName("alice")!, text: "line \(number) \"quoted\" ü",
                 at: ServerInstant(milliseconds: Int64(number)), me: number % 2 == 0)
    }

    @Test("a room, its members and its chat come back exactly as written", arguments: kinds)
    func roundTrip(kind: Kind) throws {
        let (store, reopen) = try Self.make(kind)
        store.write([.room(Self.snapshot(seq: 4)), .member(Self.lobby, Self.member("m1", name: "alice", role: .host)),
                     .member(Self.lobby, Self.member("m2", name: "bob")), .chat(Self.lobby, Self.chat(1)),
                     .alive(ServerInstant(milliseconds: 5_000))])
        store.flush()
        let loaded = try reopen().load()
        #expect(loaded.rooms.count == 1)
        #expect(loaded.rooms.first?.snapshot == Self.snapshot(seq: 4))
        #expect(Set(loaded.rooms.first?.members ?? []) == [Self.member("m1", name: "alice", role: .host), Self.member("m2", name: "bob")])
        #expect(loaded.rooms.first?.chat == [Self.chat(1)])
        #expect(loaded.lastAlive == ServerInstant(milliseconds: 5_000))
    }

    @Test("a password digest saved before scrypt comes back, and the scrypt digest a right password re-makes it into is saved", arguments: kinds)
    func upgradedPasswordDigest(kind: Kind) throws {
        let (store, reopen) = try Self.make(kind)
        // As rooms were saved before: SHA-256 iterated 1,000 times, no algorithm named.
        let old = try JSONDecoder().decode(PasswordDigest.self, from: Data("""
            {"salt":"0123456789abcdef0123456789abcdef","rounds":1000,\
            "digest":"f36cf27016973887248956c456b8f8c7dea4ad0e5489770fa82efd14347c0507"}
            """.utf8))
        var snapshot = Self.snapshot(seq: 4)
        var protection = RoomProtection()
        protection.password = old
        snapshot.protection = protection
        store.write([.room(snapshot)])
        store.flush()

        let loaded = try #require(try store.load().rooms.first?.snapshot)
        #expect(loaded.protection?.password == old)
        let now = ServerInstant(milliseconds: 10_000)
        var (room, _) = Room.restore(loaded, members: [], chat: [], downSince: now,
                                     maximumDowntime: ServerInterval(milliseconds: 60_000), now: now)
        guard case .accepted(_, let actions) = room.connectionOpened(
            ConnectRequest(name: "bob", newToken: "fresh", password: "hunter2"), now: now)
        else { Issue.record("the right password was refused"); return }
        store.write(actions.compactMap { if case .persist(let snapshot) = $0 { .room(snapshot) } else { nil } })
        store.flush()

        let again = try #require(try reopen().load().rooms.first?.snapshot.protection?.password)
        #expect(again.algorithm == .scrypt(PasswordHashing()))
        #expect(again == room.protection.password)
        #expect(again.matches("hunter2"))
        #expect(!again.matches("hunter3"))
    }

    @Test("the server's own state comes back by name, the latest of each, apart from rooms", arguments: kinds)
    func serverState(kind: Kind) throws {
        let (store, reopen) = try Self.make(kind)
        store.write([.serverState(name: "operator", json: #"{"draining":false}"#), .alive(ServerInstant(milliseconds: 7)),
                     .serverState(name: "operator", json: #"{"draining":true}"#), .serverState(name: "other", json: "[]")])
        store.flush()
        let loaded = try reopen().load()
        #expect(loaded.serverState == ["operator": #"{"draining":true}"#, "other": "[]"])
        #expect(loaded.rooms.isEmpty)
        #expect(loaded.lastAlive == ServerInstant(milliseconds: 7))
    }

    @Test("the newest snapshot, member record and forgetting win", arguments: kinds)
    func latestWins(kind: Kind) throws {
        let (store, reopen) = try Self.make(kind)
        var renamed = Self.member("m2", name: "bob")
        renamed.name = DisplayName("robert")!
        store.write([.room(Self.snapshot(seq: 4)), .member(Self.lobby, Self.member("m2", name: "bob")),
                     .member(Self.lobby, Self.member("m3", name: "carol")), .room(Self.snapshot(seq: 9))])
        store.write([.member(Self.lobby, renamed), .forgetMember(Self.lobby, MemberID("m3"))])
        store.flush()
        let room = try #require(try reopen().load().rooms.first)
        #expect(room.snapshot.state.seq == 9)
        #expect(room.members == [renamed])
    }

    @Test("only the last chat lines are kept, oldest first", arguments: kinds)
    func chatLimit(kind: Kind) throws {
        let (store, reopen) = try Self.make(kind, chatLimit: 5)
        store.write([.room(Self.snapshot(seq: 1))] + (1...12).map { .chat(Self.lobby, Self.chat($0)) })
        store.flush()
        #expect(try reopen().load().rooms.first?.chat == (8...12).map(Self.chat))
    }

    @Test("a forgotten room is gone with its members and chat", arguments: kinds)
    func forgetRoom(kind: Kind) throws {
        let (store, reopen) = try Self.make(kind)
        let other = RoomName("other")!
        store.write([.room(Self.snapshot(seq: 1)), .member(Self.lobby, Self.member("m1", name: "alice")),
                     .chat(Self.lobby, Self.chat(1)), .room(Self.snapshot(seq: 2, room: other)), .forgetRoom(Self.lobby)])
        store.flush()
        let loaded = try reopen().load()
        #expect(loaded.rooms.map(\.snapshot.room) == [other])
        #expect(loaded.rooms.first?.members == [])
    }
}

@Suite("SQLite store")
struct SQLiteStoreTests {
    static func directory() -> String { NSTemporaryDirectory() + "cowatch-sqlite-\(UUID().uuidString)" }

    @Test("a database written by a newer Cowatch is refused with a clear error")
    func newerSchema() throws {
        let directory = Self.directory()
        try SQLiteStore(directory: directory).close()
        let sqlite = Process()
        sqlite.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        sqlite.arguments = ["python3", "-c", "import sqlite3; c=sqlite3.connect('\(directory)/cowatch.sqlite'); c.execute('PRAGMA user_version = 99'); c.commit()"]
        try sqlite.run()
        sqlite.waitUntilExit()
        #expect(throws: StoreError.newerSchema(path: directory + "/cowatch.sqlite", found: 99, supported: SQLiteStore.schemaVersion)) {
            try SQLiteStore(directory: directory)
        }
    }

    @Test("a corrupted database file is refused with a clear error, not a crash")
    func corrupted() throws {
        let directory = Self.directory()
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        try Data(repeating: 0x5A, count: 8192).write(to: URL(fileURLWithPath: directory + "/cowatch.sqlite"))
        #expect {
            try SQLiteStore(directory: directory)
        } throws: { error in
            "\(error)".contains("cannot use the store at \(directory)/cowatch.sqlite") && "\(error)".contains("not a database")
        }
    }

    @Test("an unwritable data directory is refused with a clear error")
    func unwritable() throws {
        let file = NSTemporaryDirectory() + "cowatch-file-\(UUID().uuidString)"
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        #expect {
            try SQLiteStore(directory: file + "/data")
        } throws: { error in
            "\(error)".contains("cannot create the data directory")
        }
    }

    @Test("the database is in WAL mode")
    func wal() throws {
        let directory = Self.directory()
        let store = try SQLiteStore(directory: directory)
        store.write([.alive(ServerInstant(milliseconds: 1))])
        store.flush()
        #expect(FileManager.default.fileExists(atPath: directory + "/cowatch.sqlite-wal"))
        store.close()
    }
}
