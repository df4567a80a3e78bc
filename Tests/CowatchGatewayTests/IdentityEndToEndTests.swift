import CowatchClient
import Foundation
import Testing

/// Identities that stay theirs, over real sockets: ids are not given twice after a
/// restart, and a client that closes with 1000 is gone at once.
@Suite("Identities end to end", .serialized)
struct IdentityEndToEndTests {
    static func welcome(_ member: TestMember) -> JSONObject? {
        member.allFrames.lazy.compactMap { JSONObject($0) }.first { $0.string("type") == "welcome" }
    }

    @Test("after a restart, members resume as themselves and a newcomer gets an id of its own, replacing nobody")
    func restartDoesNotReuseIDs() throws {
        let data = RestartTests.dataDirectory()
        let clients = try WebSocketClients()
        defer { clients.shutdown() }
        let first = try ServerProcess(arguments: ["--data-dir", data])
        let alice = try RestartTests.member(clients, first, "/rooms/ids?name=alice")
        let bob = try RestartTests.member(clients, first, "/rooms/ids?name=bob")
        let tokens = try [alice, bob].map { try #require(Self.welcome($0)?.string("resume")) }
        let ids = [alice, bob].map { Self.welcome($0)?.object("you")?.string("id") }
        // SIGTERM writes everything kept before the process exits.
        #expect(first.terminate() == 0)

        let second = try ServerProcess(arguments: ["--data-dir", data])
        defer { _ = second.terminate() }
        let aliceBack = try RestartTests.member(clients, second, "/rooms/ids?resume=\(tokens[0])")
        let bobBack = try RestartTests.member(clients, second, "/rooms/ids?resume=\(tokens[1])")
        #expect(Self.welcome(aliceBack)?.object("you")?.string("id") == ids[0])
        #expect(Self.welcome(bobBack)?.object("you")?.string("id") == ids[1])

        let carol = try RestartTests.member(clients, second, "/rooms/ids?name=carol")
        let dave = try RestartTests.member(clients, second, "/rooms/ids?name=dave")
        let newIDs = [carol, dave].map { Self.welcome($0)?.object("you")?.string("id") }
        #expect(Set(newIDs.compactMap { $0 }).isDisjoint(with: ids.compactMap { $0 }))
        #expect(Set(newIDs.compactMap { $0 }).count == 2)
        // Both still connected: each sees dave arrive, after carol.
        for member in [aliceBack, bobBack] {
            #expect(member.event("participant") { $0.object("participant")?.string("name") == "dave" } != nil)
            #expect(member.closeInfo == nil)
        }
    }

    @Test("a client that closes with 1000 leaves at once: the others are told it left, not that it is reconnecting")
    func closeWith1000Leaves() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join("bye", name: "alice")
        let bob = try server.join("bye", name: "bob")
        let bobID = bob.id
        bob.close()
        let left = try #require(alice.event("participant-left", timeout: 5) { $0.string("id") == bobID })
        #expect(left.string("reason") == "left")
        // bob's name is free again at once.
        let again = try server.join("bye", name: "bob")
        #expect(Self.welcome(again)?.object("you")?.string("name") == "bob")
    }
}

@Suite("Room capacity end to end")
struct RoomCapacityEndToEndTests {
    @Test("connections that drop at once do not fill a room, and its owner comes into a full one")
    func capacityCountsPresentMembers() throws {
        let server = try TestServer { $0.room.maximumMembers = 2 }
        defer { server.stop() }
        let alice = try server.join("small", name: "alice")
        let key = try #require(IdentityEndToEndTests.welcome(alice)?.string("ownerKey"))
        let bob = try server.join("small", name: "bob")
        alice.goAway()
        _ = bob.event("participant") { $0.string("change") == "disconnected" }
        for index in 0..<6 {
            let dropper = try server.join("small", name: "drop\(index)")
            dropper.goAway()
            _ = bob.event("participant") { $0.object("participant")?.string("name") == "drop\(index)" && $0.string("change") == "disconnected" }
        }
        let carol = try server.join("small", name: "carol")
        let refused = server.open("/rooms/small?name=mallory")
        #expect(refused.error()?.string("code") == "room-full")
        #expect(refused.waitClosed()?.code == 1008)
        let owner = try server.join("small", name: "alice", query: "owner=\(key)")
        #expect(IdentityEndToEndTests.welcome(owner)?.object("you")?.bool("owner") == true)
        #expect(carol.closeInfo == nil)
    }
}
