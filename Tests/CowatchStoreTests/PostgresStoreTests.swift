@testable import CowatchCore
@testable import CowatchStore
import Foundation
import SlashCommands
import Testing

/// A PostgreSQL server `commands/test` started (a throwaway cluster on loopback),
/// and a fresh database on it for each test that asks.
enum TestDatabase {
    static let url = ProcessInfo.processInfo.environment["COWATCH_TEST_DATABASE_URL"]

    /// A new, empty database on the test server; its URL.
    static func fresh() throws -> String {
        guard let url, let slash = url.lastIndex(of: "/") else { throw StoreError.unreadable(path: "-", reason: "no test database") }
        let name = "cw_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        let admin = try PostgresConnection(url: url)
        try admin.execute("CREATE DATABASE \(name)")
        admin.close()
        return String(url[...slash]) + name
    }

    /// A fresh database with a store of node "n1" on it, and a plain connection
    /// to the same database for the test to look and meddle with; and its URL.
    static func store(fencing: Bool) throws -> (url: String, store: PostgresStore, admin: PostgresConnection) {
        let url = try fresh()
        let store = try PostgresStore(url: url, node: "n1", fencing: fencing)
        do {
            return (url, store, try PostgresConnection(url: url))
        } catch {
            store.close()
            throw error
        }
    }
}

@Suite("PostgreSQL store", .enabled(if: TestDatabase.url != nil, "commands/test starts PostgreSQL and sets COWATCH_TEST_DATABASE_URL"))
struct PostgresStoreTests {
    static let lobby = RoomName("lobby")!

    @Test("a node writes a room only under the lease epoch the database holds; a stale owner is fenced and told")
    func fencing() throws {
        let url = try TestDatabase.fresh()
        let store = try PostgresStore(url: url, node: "n1", fencing: true)
        defer { store.close() }
        let fenced = Fenced()
        store.onFenced = { room, epoch in
            #expect(epoch == 1)
            fenced.add(room)
        }
        let admin = try PostgresConnection(url: url)
        try admin.query("INSERT INTO room_leases (room, node, epoch, expires_at) VALUES ('lobby', 'n1', 1, now() + interval '1 minute')")
        store.own(Self.lobby, epoch: 1)
        store.write([.room(StoreContractTests.snapshot(seq: 4))])
        store.flush()
        #expect(try admin.query("SELECT snapshot FROM rooms").count == 1)
        // Another node takes the room (epoch 2); n1, paused meanwhile, writes again.
        try admin.query("UPDATE room_leases SET node = 'n2', epoch = 2")
        store.write([.room(StoreContractTests.snapshot(seq: 5)), .chat(Self.lobby, StoreContractTests.chat(1))])
        store.flush()
        let kept = try admin.query("SELECT snapshot FROM rooms").first?.first ?? nil
        #expect(kept?.contains(#""seq":4"#) == true)
        #expect(try admin.query("SELECT count(*) FROM chat").first?.first == "0")
        #expect(fenced.rooms == [Self.lobby])
        // A room this node never owned is not written either.
        store.write([.room(StoreContractTests.snapshot(seq: 1, room: RoomName("den")!))])
        store.flush()
        #expect(try admin.query("SELECT count(*) FROM rooms").first?.first == "1")
    }

    @Test("a database written by a newer Cowatch is refused with a clear error")
    func newerSchema() throws {
        let url = try TestDatabase.fresh()
        try PostgresStore(url: url, node: "n1", fencing: false).close()
        let admin = try PostgresConnection(url: url)
        try admin.query("INSERT INTO cowatch_schema (version) VALUES (99)")
        #expect(throws: StoreError.newerSchema(path: PostgresStore.redacted(url), found: 99, supported: PostgresStore.schemaVersion)) {
            try PostgresStore(url: url, node: "n1", fencing: false)
        }
    }

    @Test("an unreachable database is refused at start with a clear error; the password is not shown")
    func unreachable() {
        #expect {
            try PostgresStore(url: "postgres://cowatch:secret@127.0.0.1:1/none", node: "n1", fencing: false)
        } throws: { error in
            "\(error)".contains("cannot connect to PostgreSQL") && !"\(error)".contains("secret")
        }
    }
}

final class Fenced: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [RoomName] = []
    var rooms: [RoomName] { lock.withLock { list } }
    func add(_ room: RoomName) { lock.withLock { list.append(room) } }
}

/// The lease rows' locks, taken by the store's batch and by the lease heartbeat
/// in two sessions, interleaved step by step (docs/cluster.md, "One order of locks").
@Suite("PostgreSQL lease locks", .enabled(if: TestDatabase.url != nil, "commands/test starts PostgreSQL and sets COWATCH_TEST_DATABASE_URL"))
struct PostgresLeaseLockTests {
    /// A gate one thread waits at until another opens it.
    final class Gate: @unchecked Sendable {
        private let condition = NSCondition()
        private var open = false
        func pass() { condition.withLock { open = true; condition.broadcast() } }
        func wait(_ seconds: Double) -> Bool {
            condition.withLock {
                let deadline = Date().addingTimeInterval(seconds)
                while !open { if !condition.wait(until: deadline) { return open } }
                return true
            }
        }
    }

    /// Whether some session of the database waits for a row lock now.
    static func someoneWaitsForALock(_ admin: PostgresConnection) throws -> Bool {
        try admin.query("SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock'").first?.first == "1"
    }

    @Test("a batch writing two rooms and the heartbeat renewing them, interleaved, end without a deadlock in either lease order",
          arguments: [["a", "b"], ["b", "a"]])
    func batchAndHeartbeatInterleaved(order: [String]) throws {
        let (url, store, admin) = try TestDatabase.store(fencing: true)
        defer { store.close() }
        // The rows' physical order, which an unordered statement would lock them in.
        for room in order {
            try admin.query("INSERT INTO room_leases (room, node, epoch, expires_at) VALUES ($1, 'n1', 1, now() + interval '1 minute')", [room])
        }
        for room in ["a", "b"] { store.own(RoomName(room)!, epoch: 1) }

        // Step 1: the batch locks what its first statement on the leases locks, and stops.
        let paused = Gate(), resume = Gate()
        let first = Gate()
        store.afterStatement = { sql in
            guard sql.contains("room_leases"), !first.wait(0) else { return }
            first.pass()
            paused.pass()
            _ = resume.wait(30)
        }
        store.write([.room(StoreContractTests.snapshot(seq: 1, room: RoomName(order[1])!)),
                     .room(StoreContractTests.snapshot(seq: 1, room: RoomName(order[0])!))])
        #expect(paused.wait(10), "the batch reached its lease rows")

        // Step 2: the heartbeat, in a session of its own, renews the node's leases
        // and waits for the batch's locks.
        let renewed = Renewed()
        let done = Gate()
        Thread {
            do {
                let heartbeat = try PostgresConnection(url: url)
                renewed.rows = try heartbeat.query(PostgresLeases.renewStatement, ["n1", "1500 milliseconds", "[]"]).count
            } catch {
                renewed.error = "\(error)"
            }
            done.pass()
        }.start()
        let deadline = Date().addingTimeInterval(10)
        while try !Self.someoneWaitsForALock(admin), !done.wait(0), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }

        // Step 3: the batch goes on and commits; the heartbeat then gets its rows.
        resume.pass()
        store.flush()
        #expect(done.wait(15))
        #expect(renewed.error == nil, "the heartbeat: \(renewed.error ?? "")")
        #expect(renewed.rows == 2)
        #expect(store.failedWrites == 0)
        #expect(try admin.query("SELECT count(*) FROM rooms").first?.first == "2")
    }

    @Test("a connection lost in the middle of a batch writes the rooms not yet written once back, and the others not twice")
    func connectionLostMidBatch() throws {
        let (url, store, admin) = try TestDatabase.store(fencing: false)
        defer { store.close() }
        let cut = Gate()
        let killer = try PostgresConnection(url: url)
        let killerBox = Box(killer)
        store.afterStatement = { sql in
            guard sql.contains("INSERT INTO chat"), !cut.wait(0) else { return }
            cut.pass()
            // The writer's session ends under it, after its first room's statement.
            _ = try? killerBox.value.query("""
                SELECT pg_terminate_backend(pid) FROM pg_stat_activity
                WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'WITH fence%'
                """)
        }
        store.write([.chat(PostgresStoreTests.lobby, StoreContractTests.chat(1)), .chat(RoomName("den")!, StoreContractTests.chat(2))])
        store.flush()
        #expect(cut.wait(0))
        #expect(try admin.query("SELECT room FROM chat ORDER BY number").map { $0.first ?? nil } == ["lobby", "den"])
    }

    @Test("a write that loses a race (40P01) is tried again and lands; it is not taken for the database being away")
    func conflictIsRetried() throws {
        let (_, store, admin) = try TestDatabase.store(fencing: false)
        defer { store.close() }
        // The first insert into chat fails as a deadlock victim would; later ones pass.
        // (A sequence counts outside the transaction, which the failure rolls back.)
        try admin.execute("""
            CREATE SEQUENCE chat_inserts;
            CREATE FUNCTION fail_once() RETURNS trigger AS $$
            BEGIN
              IF nextval('chat_inserts') = 1 THEN
                RAISE EXCEPTION 'deadlock detected (a test''s)' USING ERRCODE = '40P01';
              END IF;
              RETURN NEW;
            END $$ LANGUAGE plpgsql;
            CREATE TRIGGER fail_once BEFORE INSERT ON chat FOR EACH STATEMENT EXECUTE FUNCTION fail_once();
            """)
        store.write([.chat(PostgresStoreTests.lobby, StoreContractTests.chat(1)), .chat(PostgresStoreTests.lobby, StoreContractTests.chat(2))])
        store.flush()
        #expect(try admin.query("SELECT count(*) FROM chat").first?.first == "2")
        #expect(store.failedWrites == 0)
        let statistics = store.takeStatistics()
        #expect(statistics.conflicts == 1)
        #expect(!statistics.outage)
    }
}

/// A connection handed to another thread's closure in a test.
final class Box<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}

final class Renewed: @unchecked Sendable {
    var rows = 0
    var error: String?
}
