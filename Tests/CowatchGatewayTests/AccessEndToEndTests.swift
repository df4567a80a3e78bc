import CowatchClient
import CowatchCore
import CowatchStore
import CowatchTime
import Foundation
import Testing

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
        let spent = try #require(third.error())
        #expect(spent.string("code") == "locked")
        // dave holds an invite: he is told it is spent, not to go and get one.
        #expect(spent.string("message")?.hasPrefix("this invite link no longer lets anyone in (used up, expired or revoked)") == true)
        let closed = third.waitClosed()
        #expect(closed?.code == 4004)
        // The close frame carries the whole sentence (a page shows it at its door).
        #expect(closed?.reason.hasSuffix("ask a host for a new one") == true)
        #expect(stranger.allFrames.joined().contains("only an invite link from a host lets you in"))
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
