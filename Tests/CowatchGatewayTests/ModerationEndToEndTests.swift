import CowatchClient
import CowatchCore
import CowatchStore
import CowatchTime
import Foundation
import Testing

/// Moderation that sticks and rooms that keep their owner, over real sockets
/// (docs/security.md): one test per promise.
@Suite("Ownership and moderation end to end", .serialized)
struct ModerationEndToEndTests {
    static func welcome(_ member: TestMember) -> JSONObject? {
        member.allFrames.compactMap { JSONObject($0) }.first { $0.string("type") == "welcome" }
    }

    @Test("a kicked member who reconnects at once is refused with close 4003, told who kicked them and why")
    func kickedMemberStaysOut() throws {
        // Every test client shares 127.0.0.1: address bans off, so that each of the
        // other three keeps the member out on its own (addressBanKeepsOutTheAddress).
        let server = try TestServer { $0.room.addressBans = false }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let mallory = try server.join(name: "mallory", query: "device=laptop-1")
        let token = try #require(Self.welcome(mallory)?.string("resume"))
        alice.send("/kick mallory spamming links")
        let kicked = try #require(mallory.waitClosed())
        #expect(kicked.code == 4001)
        #expect(kicked.reason.contains("alice") && kicked.reason.contains("spamming links"))

        // The same name, the same resume token, or a new name on the same device: all refused.
        for query in ["name=mallory", "name=mal2&resume=\(token)", "name=someone&device=laptop-1"] {
            let again = server.open("/rooms/lobby?\(query)")
            let error = try #require(again.error(), "no error for \(query)")
            #expect(error.string("code") == "banned")
            #expect(error.string("message")?.contains("kicked from this room by alice (spamming links)") == true)
            let closed = try #require(again.waitClosed())
            #expect(closed.code == 4003)
        }
        // Anyone else still comes in.
        _ = try server.join(name: "carol", query: "device=desktop-9")
    }

    @Test("with address bans on (the default), a kick of the only member on an address also keeps out that address")
    func addressBanKeepsOutTheAddress() throws {
        let server = try TestServer { $0.trustedProxies = ["127.0.0.1"] }
        defer { server.stop() }
        func from(_ address: String) -> [(name: String, value: String)] { [("X-Forwarded-For", address)] }
        let alice = try server.join(name: "alice", headers: from("192.0.2.1"))
        let key = try #require(Self.welcome(alice)?.string("ownerKey"))
        _ = try server.join(name: "mallory", headers: from("198.51.100.7"))
        alice.send("/kick mallory")
        _ = alice.event("participant-left")
        let stranger = TestMember(name: "stranger", encoding: .json)
        stranger.connection = server.clients.connect(server.address("/rooms/lobby?name=fresh-name&device=other"),
                                                     encoding: .json, handlers: stranger.handlers, headers: from("198.51.100.7"))
        #expect(stranger.error()?.string("code") == "banned")
        // The owner key passes any ban.
        _ = try server.join(name: "alice-tablet", query: "owner=\(key)", headers: from("198.51.100.7"))
    }

    @Test("a front's member (Syncplay's port) is known by the person's address when it proves the front's secret, and only then")
    func frontSecretCarriesThePersonsAddress() throws {
        let server = try TestServer { $0.frontSecret = "front-secret-for-tests" }
        defer { server.stop() }
        func through(_ secret: String, from address: String) -> [(name: String, value: String)] {
            [("X-Cowatch-Front", secret), ("X-Forwarded-For", address)]
        }
        let alice = try server.join(name: "alice")
        _ = try server.join(name: "mallory", headers: through("front-secret-for-tests", from: "198.51.100.7"))
        alice.send("/kick mallory")
        _ = alice.event("participant-left")
        // Through the front again, under another name: the person's address keeps them out.
        let again = TestMember(name: "again", encoding: .json)
        again.connection = server.clients.connect(server.address("/rooms/lobby?name=fresh-name"), encoding: .json,
                                                  handlers: again.handlers, headers: through("front-secret-for-tests", from: "198.51.100.7"))
        #expect(again.error()?.string("code") == "banned")
        // A forged front (the wrong secret) counts as its own address, not the one it names.
        _ = try server.join(name: "bystander", headers: through("not-the-secret", from: "198.51.100.7"))
    }

    @Test("a ban of someone whose address others use (no proxy, one household) keeps out that person only, and the host is told")
    func sharedAddressBanHitsOnlyItsTarget() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        _ = try server.join(name: "eve", query: "device=eve-laptop")
        let bob = try server.join(name: "bob", query: "device=bob-phone")
        alice.send("/ban eve spoilers")
        #expect(alice.event("notice") { $0.string("text")?.contains("not the address") == true } != nil)
        _ = alice.event("participant-left")
        #expect(bob.closeInfo == nil)
        _ = try server.join(name: "carol", query: "device=carol-tablet")
        let eve = server.open("/rooms/lobby?name=evelyn&device=eve-laptop")
        #expect(eve.error()?.string("code") == "banned")
    }

    @Test("a banned member is refused under a new name, and after a restart; /unban lets them back")
    func banSticksAcrossNamesAndRestarts() throws {
        let data = NSTemporaryDirectory() + "cowatch-ban-\(UUID().uuidString)"
        let clients = try WebSocketClients()
        defer { clients.shutdown() }
        let first = try ServerProcess(arguments: ["--data-dir", data, "--address-bans", "false"])
        let alice = try RestartTests.member(clients, first, "/rooms/club?name=alice&device=phone-a")
        let ownerKey = try #require(Self.welcome(alice)?.string("ownerKey"))
        _ = try RestartTests.member(clients, first, "/rooms/club?name=mallory&device=phone-m")
        alice.send("/ban mallory trolling")
        _ = alice.event("participant-left") { $0.string("reason") == "banned" }
        try first.waitUntilWritten()
        first.kill9()

        let second = try ServerProcess(arguments: ["--data-dir", data, "--address-bans", "false"])
        defer { _ = second.terminate() }
        let refused = TestMember(name: "x", encoding: .json)
        refused.connection = clients.connect(second.address("/rooms/club?name=totally-new&device=phone-m"),
                                             encoding: .json, handlers: refused.handlers)
        #expect(refused.error()?.string("code") == "banned")
        #expect(refused.waitClosed()?.code == 4003)

        let owner = try RestartTests.member(clients, second, "/rooms/club?name=alice2&owner=\(ownerKey)")
        #expect(Self.welcome(owner)?.object("you")?.bool("owner") == true)
        owner.send("/bans")
        let bans = try #require(owner.event("reply") { $0.string("command") == "bans" })
        #expect(bans.array("bans")?.first?.string("name") == "mallory")
        owner.send("/unban mallory")
        _ = owner.event("notice") { $0.string("text")?.contains("let mallory back in") == true }
        _ = try RestartTests.member(clients, second, "/rooms/club?name=mallory&device=phone-m")
    }

    @Test("the owner key makes its holder host again after every host has left, and hosts cannot deop or kick the owner")
    func ownerKeyOutlivesHosts() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join("den", name: "alice")
        let key = try #require(Self.welcome(alice)?.string("ownerKey"))
        #expect(Self.welcome(alice)?.object("you")?.string("role") == "host")
        let bob = try server.join("den", name: "bob")
        #expect(Self.welcome(bob)?.string("ownerKey") == nil)
        alice.send("/op bob\n/policy control hosts")
        _ = bob.event("participant") { $0.object("participant")?.string("role") == "host" }
        bob.send("/deop alice")
        #expect(bob.error()?.string("code") == "forbidden")
        bob.send("/kick alice")
        #expect(bob.error()?.string("code") == "forbidden")

        alice.close()
        bob.close()
        try server.waitForMembers(0)
        try server.skip(.seconds(61))  // both resume graces (60 s by default) pass: the room is empty

        let stranger = try server.join("den", name: "eve")
        let you = Self.welcome(stranger)?.object("you")
        #expect(you?.string("role") == "member")
        stranger.send("/watch https://example.org/takeover.mp4")
        #expect(stranger.error()?.string("code") == "forbidden")
        let back = try server.join("den", name: "alice-phone", query: "owner=\(key)")
        #expect(Self.welcome(back)?.object("you")?.string("role") == "host")
        #expect(Self.welcome(back)?.object("you")?.bool("owner") == true)
    }

    @Test("a room emptied keeps its owner and policy until it expires, then a newcomer founds a new one")
    func emptyRoomKeptUntilExpiry() throws {
        // A day's expiry and the minute of grace, skipped over on the server's clocks.
        let server = try TestServer {
            $0.room.resumeGrace = ServerInterval(seconds: 60)
            $0.room.roomExpiry = ServerInterval(seconds: 86_400)
        }
        defer { server.stop() }
        let alice = try server.join("attic", name: "alice")
        alice.send("/policy control hosts stall wait")
        _ = alice.event("state") { $0.object("policy")?.string("control") == "hosts" }
        alice.close()
        try server.waitForMembers(0)
        try server.skip(.seconds(61))  // alice's grace is over: the room is empty, not expired

        let early = try server.join("attic", name: "bob")
        #expect(Self.welcome(early)?.object("you")?.string("role") == "member")
        #expect(Self.welcome(early)?.string("ownerKey") == nil)
        let state = try #require(early.event("state"))
        #expect(state.object("policy")?.string("stall") == "wait")
        early.close()
        try server.waitForMembers(0)
        try server.skip(.seconds(61))  // bob's grace
        try server.skip(.seconds(86_400))  // then the expiry

        let late = try server.join("attic", name: "carol")
        #expect(Self.welcome(late)?.string("ownerKey") != nil)
        #expect(Self.welcome(late)?.object("you")?.string("role") == "host")
        #expect(try #require(late.event("state")).object("policy")?.string("control") == "everyone")
    }

    @Test("a muted member's chat is refused while its player reports still count; slow mode spaces chat lines")
    func muteAndSlowMode() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob", query: "player=1")
        alice.send("/watch https://example.org/a.mp4\n/mute bob")
        _ = alice.event("participant") { $0.object("participant")?.bool("muted") == true }
        bob.send("hello?")
        #expect(bob.error()?.string("code") == "muted")
        alice.send("/play")
        let waiting = try #require(bob.state("waiting"))
        bob.send("/ready \(waiting.int("seq") ?? 0)")
        #expect(alice.state("playing") != nil)

        alice.send("/unmute bob\n/slow 30")
        _ = alice.event("notice") { $0.string("text")?.contains("slow mode") == true }
        bob.send("first")
        _ = alice.event("chat") { $0.string("text") == "first" }
        bob.send("second")
        let slow = try #require(bob.error())
        #expect(slow.string("code") == "slow-mode")
        alice.send("hosts are not slowed")
        _ = bob.event("chat") { $0.string("text") == "hosts are not slowed" }
        #expect(alice.allFrames.allSatisfy { !$0.contains("\"text\":\"second\"") })
    }
}
