import CowatchClient
import CowatchCore
import CowatchStore
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
        Thread.sleep(forTimeInterval: 0.5)
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
        let server = try TestServer { $0.room.resumeGrace = ServerInterval(milliseconds: 300) }
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
        Thread.sleep(forTimeInterval: 1.0)  // both resume graces pass: the room is empty

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
        let server = try TestServer {
            $0.room.resumeGrace = ServerInterval(milliseconds: 200)
            $0.room.roomExpiry = ServerInterval(milliseconds: 1500)
        }
        defer { server.stop() }
        let alice = try server.join("attic", name: "alice")
        alice.send("/policy control hosts stall wait")
        _ = alice.event("state") { $0.object("policy")?.string("control") == "hosts" }
        alice.close()
        Thread.sleep(forTimeInterval: 0.6)

        let early = try server.join("attic", name: "bob")
        #expect(Self.welcome(early)?.object("you")?.string("role") == "member")
        #expect(Self.welcome(early)?.string("ownerKey") == nil)
        let state = try #require(early.event("state"))
        #expect(state.object("policy")?.string("stall") == "wait")
        early.close()
        Thread.sleep(forTimeInterval: 2.2)  // grace, then the expiry

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

@Suite("Locks, passwords and invites end to end", .serialized)
struct AccessEndToEndTests {
    @Test("a locked room refuses a stranger with 4004 and admits an invite holder until the invite's uses run out")
    func lockedRoomAndInvites() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join("vault", name: "alice")
        alice.send("/lock\n/invite 2 30")
        let reply = try #require(alice.event("reply") { $0.string("command") == "invite" })
        let token = try #require(reply.string("token"))
        #expect(reply.object("invite")?.int("usesLeft") == 2)

        let stranger = server.open("/rooms/vault?name=eve")
        #expect(stranger.error()?.string("code") == "locked")
        #expect(stranger.waitClosed()?.code == 4004)
        _ = try server.join("vault", name: "bob", query: "invite=\(token)")
        _ = try server.join("vault", name: "carol", query: "invite=\(token)")
        let third = server.open("/rooms/vault?name=dave&invite=\(token)")
        #expect(third.error()?.string("code") == "locked")
        #expect(third.waitClosed()?.code == 4004)
    }

    @Test("wrong passwords are refused with 4005, then the address is refused without a check")
    func passwordsAndTheirLimit() throws {
        let server = try TestServer { $0.room.passwordAttempts = 3 }
        defer { server.stop() }
        let alice = try server.join("club", name: "alice")
        alice.send("/password open-sesame")
        _ = alice.event("state") { $0.object("access")?.bool("password") == true }
        let none = server.open("/rooms/club?name=bob")
        #expect(none.error()?.string("code") == "password-required")
        #expect(none.waitClosed()?.code == 4005)
        _ = try server.join("club", name: "bob", query: "password=open-sesame")
        for _ in 0..<3 {
            let wrong = server.open("/rooms/club?name=eve&password=guess")
            #expect(wrong.error()?.string("code") == "wrong-password")
            #expect(wrong.waitClosed()?.code == 4005)
        }
        let limited = server.open("/rooms/club?name=eve&password=open-sesame")
        #expect(limited.error()?.string("code") == "too-many-attempts")
        #expect(limited.waitClosed()?.code == 4005)
    }

    @Test("a room saved with a password digest from before scrypt lets the right password in and is saved with scrypt")
    func oldPasswordDigestUpgraded() throws {
        let store = MemoryStore()
        // A room as it was saved before: SHA-256 iterated 1,000 times over the salt and "hunter2".
        var protection = RoomProtection()
        protection.password = try JSONDecoder().decode(PasswordDigest.self, from: Data("""
            {"salt":"0123456789abcdef0123456789abcdef","rounds":1000,\
            "digest":"f36cf27016973887248956c456b8f8c7dea4ad0e5489770fa82efd14347c0507"}
            """.utf8))
        let now = ServerInstant(milliseconds: Int64(Date().timeIntervalSince1970 * 1000))
        let club = try #require(RoomName("club"))
        var snapshot = Room(name: club, now: now).snapshot(at: now)
        snapshot.state.policy.password = true
        snapshot.protection = protection
        store.write([.room(snapshot)])

        let server = try TestServer(store: store)
        let wrong = server.open("/rooms/club?name=eve&password=hunter3")
        #expect(wrong.error()?.string("code") == "wrong-password")
        #expect(wrong.waitClosed()?.code == 4005)
        _ = try server.join("club", name: "bob", query: "password=hunter2")
        // Stopping saves what the server had yet to write.
        server.stop()
        let saved = try #require(try store.load().rooms.first { $0.snapshot.room == club }?.snapshot.protection?.password)
        #expect(saved.algorithm == .scrypt(PasswordHashing()))
        #expect(saved.matches("hunter2"))

        // The scrypt digest is what the room asks of the next newcomer, after a restart.
        let restarted = try TestServer(store: store)
        defer { restarted.stop() }
        _ = try restarted.join("club", name: "carol", query: "password=hunter2")
        let refused = restarted.open("/rooms/club?name=eve&password=hunter3")
        #expect(refused.error()?.string("code") == "wrong-password")
    }
}

@Suite("Origins, proxies and media hosts", .serialized)
struct UpgradeChecksTests {
    @Test("a browser upgrade from another site's page is refused with 403; the server's own pages and allowed origins pass")
    func originsAreChecked() throws {
        let server = try TestServer { $0.allowedOrigins = ["https://watch.example.org"] }
        defer { server.stop() }
        let host = "127.0.0.1:\(server.port)"
        func upgrade(_ origin: String?) throws -> String {
            let socket = try RawSocket(port: server.port)
            return try socket.upgrade(path: "/rooms/lobby?name=x", protocolName: "cowatch.v1.json", host: host,
                                      headers: origin.map { ["Origin: \($0)"] } ?? [])
        }
        let foreign = try upgrade("https://evil.example.com")
        #expect(foreign.hasPrefix("HTTP/1.1 403"))
        #expect(try upgrade("http://127.0.0.1:\(server.port + 1)").hasPrefix("HTTP/1.1 403"))
        #expect(try upgrade("http://\(host)").hasPrefix("HTTP/1.1 101"))
        #expect(try upgrade("https://watch.example.org").hasPrefix("HTTP/1.1 101"))
        #expect(try upgrade(nil).hasPrefix("HTTP/1.1 101"))
    }

    @Test("behind a trusted proxy, bans and limits use the address in X-Forwarded-For")
    func trustedProxyAddresses() throws {
        let server = try TestServer { $0.trustedProxies = ["127.0.0.1"] }
        defer { server.stop() }
        func open(_ name: String, from address: String) throws -> RawSocket {
            let socket = try RawSocket(port: server.port)
            let head = try socket.upgrade(path: "/rooms/lobby?name=\(name)", protocolName: "cowatch.v1.json",
                                          headers: ["X-Forwarded-For: 203.0.113.9, \(address)"])
            #expect(head.hasPrefix("HTTP/1.1 101"), "\(name) from \(address): \(head)")
            return socket
        }
        let alice = try server.join(name: "alice")
        let mallory = try open("mallory", from: "10.1.1.1")
        _ = alice.event("participant") { $0.object("participant")?.string("name") == "mallory" }
        alice.send("/kick mallory")
        _ = alice.event("participant-left")
        mallory.close()
        let sameAddress = try open("someone", from: "10.1.1.1")
        let refused = String(decoding: sameAddress.read(until: { String(decoding: $0, as: UTF8.self).contains("\"code\":\"banned\"") }), as: UTF8.self)
        #expect(refused.contains("\"code\":\"banned\""))
        let otherAddress = try open("carol", from: "10.2.2.2")
        _ = alice.event("participant") { $0.object("participant")?.string("name") == "carol" }
        let welcomed = String(decoding: otherAddress.read(until: { String(decoding: $0, as: UTF8.self).contains("\"type\":\"welcome\"") }), as: UTF8.self)
        #expect(welcomed.contains("\"type\":\"welcome\""))
    }

    @Test("with media hosts set, /watch of another host is refused with a clear error")
    func mediaHosts() throws {
        let server = try TestServer { $0.room.mediaHosts = ["media.example.org"] }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        alice.send("/watch https://elsewhere.example.com/a.mp4")
        let error = try #require(alice.error())
        #expect(error.string("code") == "media-host")
        #expect(error.string("message") == "/watch: this server plays media only from media.example.org, not from elsewhere.example.com")
        alice.send("/watch https://MEDIA.example.org:8443/a.mp4")
        #expect(alice.state("paused") != nil)
    }
}

@Suite("Bot tokens end to end", .serialized)
struct BotTokenEndToEndTests {
    @Test("a bot presents its token as Authorization: Bearer or token=; each scope allows what it says and nothing more")
    func scopesOverSockets() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join("studio", name: "alice")
        alice.send("/watch https://example.org/a.mp4\n/policy control hosts\n/token reader read\n/token dj control")
        let reader = try #require(alice.event("reply") { $0.string("command") == "token" && $0.object("bot")?.string("name") == "reader" })
        let dj = try #require(alice.event("reply") { $0.string("command") == "token" && $0.object("bot")?.string("name") == "dj" })
        let readToken = try #require(reader.string("token")), controlToken = try #require(dj.string("token"))

        // Bearer header, by a raw upgrade.
        let socket = try RawSocket(port: server.port)
        let head = try socket.upgrade(path: "/rooms/studio", protocolName: "cowatch.v1.json",
                                      headers: ["Authorization: Bearer \(readToken)"])
        #expect(head.hasPrefix("HTTP/1.1 101"))
        _ = alice.event("participant") { $0.object("participant")?.string("bot") == "read" }
        try socket.write(RawFrames.maskedText("hello from a reader"))
        let frames = String(decoding: socket.read(until: { String(decoding: $0, as: UTF8.self).contains("\"code\":\"forbidden\"") }), as: UTF8.self)
        #expect(frames.contains("\"code\":\"forbidden\""))

        let bot = try server.join("studio", name: "ignored", query: "token=\(controlToken)")
        #expect(ModerationEndToEndTests.welcome(bot)?.object("you")?.string("name") == "dj")
        bot.send("/play now")
        #expect(alice.state("playing") != nil)

        let fake = server.open("/rooms/studio?token=nope")
        #expect(fake.error()?.string("code") == "bad-token")
        #expect(fake.waitClosed()?.code == 4006)
    }
}

@Suite("The operator's admin API", .serialized)
struct AdminAPITests {
    static let token = "operator-secret-0123456789"

    static func call(_ server: TestServer, _ method: String, _ path: String, token: String? = AdminAPITests.token) throws
        -> (status: Int, body: JSONObject?) {
        let address = try #require(WebSocketAddress("http://127.0.0.1:\(server.port)\(path)"))
        let (status, body) = try PlainHTTP.request(method, address, bearer: token)
        return (status, JSONObject(body))
    }

    @Test("the admin API refuses requests without the operator's token (401), and is off without one (404)")
    func refusesWithoutTheToken() throws {
        let off = try TestServer()
        defer { off.stop() }
        #expect(try Self.call(off, "GET", "/admin/rooms").status == 404)

        let server = try TestServer { $0.adminToken = Self.token }
        defer { server.stop() }
        #expect(try Self.call(server, "GET", "/admin/rooms", token: nil).status == 401)
        #expect(try Self.call(server, "GET", "/admin/rooms", token: "wrong").status == 401)
        #expect(try Self.call(server, "POST", "/admin/drain", token: "wrong").status == 401)
        #expect(try Self.call(server, "GET", "/admin/rooms").status == 200)
    }

    @Test("the operator lists rooms, closes one, and its members are told")
    func listsAndClosesRooms() throws {
        let server = try TestServer { $0.adminToken = Self.token }
        defer { server.stop() }
        let alice = try server.join("noisy", name: "alice")
        _ = try server.join("quiet", name: "bob")
        let listed = try Self.call(server, "GET", "/admin/rooms")
        #expect(listed.body?.array("rooms")?.map { $0.string("name") } == ["noisy", "quiet"])
        #expect(listed.body?.array("rooms")?.first?.int("connected") == 1)
        let closed = try Self.call(server, "POST", "/admin/rooms/noisy/close")
        #expect(closed.status == 200)
        let close = try #require(alice.waitClosed())
        #expect(close.reason.contains("operator closed this room"))
        #expect(try Self.call(server, "GET", "/admin/rooms").body?.array("rooms")?.map { $0.string("name") } == ["quiet"])
        #expect(try Self.call(server, "POST", "/admin/rooms/noisy/close").status == 404)
    }

    @Test("a server-wide address ban closes that address's connections and refuses its upgrades with 403")
    func serverWideBan() throws {
        let server = try TestServer { $0.adminToken = Self.token }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        #expect(try Self.call(server, "POST", "/admin/bans?address=127.0.0.1").status == 200)
        #expect(alice.waitClosed()?.code == 4003)
        let socket = try RawSocket(port: server.port)
        #expect(try socket.upgrade(path: "/rooms/lobby?name=x", protocolName: "cowatch.v1.json").hasPrefix("HTTP/1.1 403"))
        #expect(try Self.call(server, "POST", "/admin/bans/lift?address=127.0.0.1").status == 200)
        _ = try server.join(name: "back")
    }

    @Test("a server-wide ban takes one address: names, ranges and bad minutes are refused with 400, and ban nobody")
    func serverWideBanTakesOneAddress() throws {
        let server = try TestServer { $0.adminToken = Self.token }
        defer { server.stop() }
        for address in ["not-an-ip", "0.0.0.0/0", "10.0.0.0/8", "example.org", "127.0.0.1 ", "::1/128", "1.2.3"] {
            let encoded = address.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? address
            #expect(try Self.call(server, "POST", "/admin/bans?address=\(encoded)").status == 400, "\(address)")
        }
        #expect(try Self.call(server, "POST", "/admin/bans?address=198.51.100.7&minutes=abc").status == 400)
        #expect(try Self.call(server, "POST", "/admin/bans?address=198.51.100.7&minutes=-5").status == 400)
        #expect(try Self.call(server, "GET", "/admin/bans").body?.array("bans")?.isEmpty == true)
        // An IPv6 address is kept as the server writes peers' addresses.
        #expect(try Self.call(server, "POST", "/admin/bans?address=2001:DB8:0:0::1&minutes=5").status == 200)
        #expect(try Self.call(server, "GET", "/admin/bans").body?.array("bans")?.first?.string("address") == "2001:db8::1")
        _ = try server.join(name: "still-welcome")
    }

    @Test("draining refuses new rooms with 503 and keeps existing ones; creation tokens gate new rooms")
    func drainAndCreationTokens() throws {
        let server = try TestServer {
            $0.adminToken = Self.token
            $0.roomCreation = .token
        }
        defer { server.stop() }
        let refused = try RawSocket(port: server.port)
        #expect(try refused.upgrade(path: "/rooms/new-room?name=x", protocolName: "cowatch.v1.json").hasPrefix("HTTP/1.1 403"))
        let issued = try Self.call(server, "POST", "/admin/creation-tokens?uses=1")
        let create = try #require(issued.body?.string("token"))
        _ = try server.join("new-room", name: "alice", query: "create=\(create)")
        let again = try RawSocket(port: server.port)
        #expect(try again.upgrade(path: "/rooms/other-room?name=x&create=\(create)", protocolName: "cowatch.v1.json")
            .hasPrefix("HTTP/1.1 403"))
        _ = try server.join("new-room", name: "bob")

        #expect(try Self.call(server, "POST", "/admin/drain?on=1").body?.bool("draining") == true)
        let second = try #require(try Self.call(server, "POST", "/admin/creation-tokens").body?.string("token"))
        let draining = try RawSocket(port: server.port)
        #expect(try draining.upgrade(path: "/rooms/third?name=x&create=\(second)", protocolName: "cowatch.v1.json")
            .hasPrefix("HTTP/1.1 503"))
        _ = try server.join("new-room", name: "carol")
    }

    @Test("an operator-issued bot token lets a bot into its room with its scope")
    func operatorTokens() throws {
        let server = try TestServer { $0.adminToken = Self.token }
        defer { server.stop() }
        let alice = try server.join("studio", name: "alice")
        alice.send("/lock")
        _ = alice.event("state") { $0.object("access")?.bool("locked") == true }
        let issued = try Self.call(server, "POST", "/admin/rooms/studio/tokens?name=announcer&scope=read")
        let token = try #require(issued.body?.string("token"))
        let bot = try server.join("studio", name: "x", query: "token=\(token)")
        #expect(ModerationEndToEndTests.welcome(bot)?.object("you")?.string("bot") == "read")
        bot.send("hello")
        #expect(bot.error()?.string("code") == "forbidden")
        let number = try #require(issued.body?.int("number"))
        #expect(try Self.call(server, "POST", "/admin/rooms/studio/revoke-token?number=\(number)").status == 200)
        #expect(bot.waitClosed()?.reason.contains("revoked by the server's operator") == true)
        let refused = server.open("/rooms/studio?token=\(token)")
        #expect(refused.error()?.string("code") == "bad-token")
    }

    @Test("cowatch admin drives the API from the command line")
    func commandLine() throws {
        let tokenFile = NSTemporaryDirectory() + "cowatch-admin-\(UUID().uuidString).token"
        try Self.token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let server = try ServerProcess(arguments: ["--store", "memory", "--admin-token-file", tokenFile])
        defer { _ = server.terminate() }
        let clients = try WebSocketClients()
        defer { clients.shutdown() }
        _ = try RestartTests.member(clients, server, "/rooms/movie?name=alice")
        let serverURL = "http://127.0.0.1:\(server.port)"
        func admin(_ arguments: [String]) throws -> (Int32, String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: ServerProcess.binary)
            process.arguments = ["admin", "--server", serverURL, "--token-file", tokenFile] + arguments
            let output = Pipe()
            process.standardOutput = output
            try process.run()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return (process.terminationStatus, String(decoding: data, as: UTF8.self))
        }
        let (status, listing) = try admin(["rooms"])
        #expect(status == 0)
        #expect(listing.contains("\"name\":\"movie\""))
        #expect(try admin(["close", "nowhere"]).0 == 1)

        // cowatch token create: the operator's bot token, through the same API.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServerProcess.binary)
        process.arguments = ["token", "create", "--room", "movie", "--scope", "read", "--name", "narrator",
                             "--server", serverURL, "--token-file", tokenFile]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let issued = JSONObject(String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let botToken = try #require(issued?.string("token"))
        let bot = try RestartTests.member(clients, server, "/rooms/movie?token=\(botToken)")
        #expect(ModerationEndToEndTests.welcome(bot)?.object("you")?.string("name") == "narrator")

        #expect(try admin(["close", "movie"]).0 == 0)
    }

    @Test("the operator's server-wide bans and drain outlive a restart")
    func operatorStateIsKept() throws {
        let data = NSTemporaryDirectory() + "cowatch-operator-\(UUID().uuidString)"
        let tokenFile = data + ".token"
        try Self.token.write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let arguments = ["--data-dir", data, "--admin-token-file", tokenFile]
        let first = try ServerProcess(arguments: arguments)
        func post(_ server: ServerProcess, _ path: String) throws -> Int {
            let address = try #require(WebSocketAddress("http://127.0.0.1:\(server.port)\(path)"))
            return try PlainHTTP.request("POST", address, bearer: Self.token).status
        }
        #expect(try post(first, "/admin/bans?address=198.51.100.7") == 200)
        #expect(try post(first, "/admin/drain?on=1") == 200)
        Thread.sleep(forTimeInterval: 0.5)
        first.kill9()

        let second = try ServerProcess(arguments: arguments)
        defer { _ = second.terminate() }
        let address = try #require(WebSocketAddress("http://127.0.0.1:\(second.port)/admin/bans"))
        let bans = JSONObject(try PlainHTTP.request("GET", address, bearer: Self.token).body)
        #expect(bans?.array("bans")?.map { $0.string("address") } == ["198.51.100.7"])
        let socket = try RawSocket(port: second.port)
        #expect(try socket.upgrade(path: "/rooms/brand-new?name=x", protocolName: "cowatch.v1.json").hasPrefix("HTTP/1.1 503"))
    }
}

@Suite("Public rooms on the landing page", .serialized)
struct PublicRoomsTests {
    @Test("/public on lists the room with what is playing and how many watch; locked rooms and /public off leave the list")
    func listing() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join("film-club", name: "alice")
        _ = try server.join("film-club", name: "bob")
        _ = try server.join("private", name: "carol")
        #expect(try JSONObject(server.get("/rooms.json").body)?.array("rooms")?.isEmpty == true)
        alice.send("/watch https://example.org/nosferatu.mp4 Nosferatu\n/public on")
        _ = alice.event("state") { $0.object("access")?.bool("public") == true }
        let rooms = try #require(JSONObject(server.get("/rooms.json").body)?.array("rooms"))
        #expect(rooms.map { $0.string("name") } == ["film-club"])
        #expect(rooms.first?.string("title") == "Nosferatu")
        #expect(rooms.first?.int("watching") == 2)
        alice.send("/lock")
        _ = alice.event("state") { $0.object("access")?.bool("locked") == true }
        #expect(try JSONObject(server.get("/rooms.json").body)?.array("rooms")?.isEmpty == true)
        alice.send("/unlock\n/public off")
        _ = alice.event("state") { $0.object("access")?.bool("public") == false }
        #expect(try JSONObject(server.get("/rooms.json").body)?.array("rooms")?.isEmpty == true)
    }
}

@Suite("Operators' logs", .serialized)
struct MembershipLogTests {
    @Test("joins, leaves, kicks and refusals are logged at info with the room, the member and why")
    func whoDidWhat() throws {
        let server = try ServerProcess(arguments: ["--store", "memory", "--address-bans", "false"], logLevel: "info")
        let clients = try WebSocketClients()
        defer { clients.shutdown() }
        let alice = try RestartTests.member(clients, server, "/rooms/den?name=alice")
        _ = try RestartTests.member(clients, server, "/rooms/den?name=mallory")
        alice.send("/kick mallory spam")
        _ = alice.event("participant-left")
        let refused = TestMember(name: "again", encoding: .json)
        refused.connection = clients.connect(server.address("/rooms/den?name=mallory"), encoding: .json, handlers: refused.handlers)
        _ = refused.waitClosed()
        _ = server.terminate()
        let log = server.remainingOutput()
        let lines = log.split(separator: "\n")
        #expect(lines.contains { $0.contains("member arrived") && $0.contains("room=den") && $0.contains("name=mallory") }, "\(log)")
        #expect(lines.contains { $0.contains("member removed") && $0.contains("kicked from this room by alice (spam)") })
        #expect(lines.contains { $0.contains("member left") && $0.contains("reason=kicked") })
        #expect(lines.contains { $0.contains("connection refused") && $0.contains("code=banned") })
    }
}

@Suite("Room names end to end")
struct RoomNameEndToEndTests {
    @Test("/rooms/Lobby and /rooms/lobby are one room, named in lowercase")
    func oneRoomWhateverTheCase() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join("Movie-Night", name: "alice")
        let bob = try server.join("movie-night", name: "bob")
        #expect(ModerationEndToEndTests.welcome(bob)?.string("room") == "movie-night")
        #expect(ModerationEndToEndTests.welcome(bob)?.array("participants")?.count == 2)
        _ = alice.event("participant") { $0.object("participant")?.string("name") == "bob" }
        #expect(try server.get("/rooms/MOVIE-NIGHT").status == 200)
    }
}
