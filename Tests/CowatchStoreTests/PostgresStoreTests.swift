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
