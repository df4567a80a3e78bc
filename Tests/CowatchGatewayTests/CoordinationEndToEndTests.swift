import CowatchCore
import CowatchTime
import Foundation
import Testing

/// The coordinator's rules as players see them over real connections.
@Suite("Coordination end to end")
struct CoordinationEndToEndTests {
    /// Alice and Bob are players in a room watching an item, paused at 0.
    static func twoPlayers(_ server: TestServer) throws -> (TestMember, TestMember) {
        let alice = try server.join(name: "alice", query: "player=1")
        let bob = try server.join(name: "bob", query: "player=1")
        alice.send("/watch https://example.org/a.mp4 Episode 1")
        _ = alice.state("paused")
        _ = bob.state("paused")
        return (alice, bob)
    }

    static func isState(_ event: JSONObject, _ status: String) -> Bool {
        event.string("type") == "state" && event.object("playback")?.string("status") == status
    }

    @Test("a coordinated start waits for both players' /ready, then starts both at the same future instant")
    func coordinatedStart() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, bob) = try Self.twoPlayers(server)
        alice.send("/play")
        let waiting = try #require(bob.state("waiting"))
        let seq = try #require(waiting.int("seq"))
        alice.send("/ready \(seq)")
        // alice's round trip: her /ready has been read; then bob's: whatever it
        // made the room send him came before his answer.
        _ = try #require(alice.untilRoundTrip())
        #expect(try #require(bob.untilRoundTrip()).allSatisfy { !Self.isState($0, "playing") })
        // The server decides `at` between these two readings of the clock it reads
        // (SystemClock, as SkippableTime does with nothing skipped): at least the
        // minimum lead and at most the maximum lead after its decision, however
        // long the frames then take to reach the test on a loaded machine.
        let lead = RoomConfiguration()
        let sent = SystemClock.now().milliseconds
        bob.send("/ready \(seq)")
        let playingA = try #require(alice.state("playing"))
        let playingB = try #require(bob.state("playing"))
        let received = SystemClock.now().milliseconds
        let at = try #require(playingA.object("playback")?.int("at"))
        #expect(at == playingB.object("playback")?.int("at"))
        #expect(at >= sent + lead.minimumLead.milliseconds)
        #expect(at <= received + lead.maximumLead.milliseconds)
    }

    @Test("under stall continue a stalled player is suspended alone; under stall wait the group waits for it")
    func stallPolicies() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, bob) = try Self.twoPlayers(server)
        alice.send("/play now")
        _ = alice.state("playing")
        bob.send("/buffering")
        let suspended = try #require(alice.event("participant") { $0.string("change") == "suspended" })
        #expect(suspended.object("participant")?.strings("suspensions") == ["stallRecovery"])
        // alice saw bob's suspension, so the room had read his /buffering: a wait
        // it caused would reach her before her round trip's answer.
        #expect(try #require(alice.untilRoundTrip()).allSatisfy { !Self.isState($0, "waiting") })
        let playing = try #require(bob.allFrames.compactMap { JSONObject($0) }.last { $0.string("type") == "state" })
        bob.send("/ready \(playing.int("seq") ?? -1)")
        #expect(alice.event("participant") { $0.string("change") == "resumed" } != nil)

        alice.send("/policy stall wait")
        _ = alice.event("state") { $0.object("policy")?.string("stall") == "wait" }
        bob.send("/buffering")
        let waiting = try #require(alice.state("waiting"))
        #expect(waiting.object("playback")?.string("cause") == "stall")
        let seq = try #require(waiting.int("seq"))
        alice.send("/ready \(seq)")
        bob.send("/ready \(seq)")
        #expect(alice.state("playing") != nil)
    }

    @Test("a suspended member's /pause changes nothing; /resume at moves the whole group")
    func suspensionAndResumeAt() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (alice, bob) = try Self.twoPlayers(server)
        alice.send("/play now")
        _ = bob.state("playing")
        bob.send("/suspend userIsChangingCurrentTime")
        _ = alice.event("participant") { $0.string("change") == "suspended" }
        bob.send("/pause")
        #expect(bob.error()?.string("code") == "suspended")
        #expect(try #require(alice.untilRoundTrip()).allSatisfy { $0.string("type") != "state" })
        bob.send("/resume at 2:00")
        let moved = try #require(alice.state("waiting"))
        #expect(moved.object("playback")?.number("position") == 120)
        #expect(moved.object("playback")?.string("cause") == "resume")
    }

    @Test("/catchup sends the member alone a replay plan and its suspension ends by itself")
    func catchup() throws {
        let server = try TestServer { $0.room.minimumLead = .zero }
        defer { server.stop() }
        let (alice, bob) = try Self.twoPlayers(server)
        alice.send("/seek 30\n/play now")
        _ = bob.state("playing")
        bob.send("/catchup 0.2")
        let plan = try #require(bob.event("catchup"))
        #expect(plan.number("rate") == 2)
        #expect((plan.number("from") ?? 0) >= 29.7)
        let ended = try #require(alice.event("participant", timeout: 3) { $0.string("change") == "resumed" })
        #expect(ended.object("participant")?.strings("suspensions")?.isEmpty == true)
        #expect(alice.allFrames.allSatisfy { !$0.contains("\"type\":\"catchup\"") })
    }

    @Test("under control hosts only hosts control playback; a host can kick")
    func hostsAndKick() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob")
        alice.send("/watch https://example.org/a.mp4\n/policy control hosts")
        _ = bob.event("state") { $0.object("policy")?.string("control") == "hosts" }
        bob.send("/play")
        #expect(bob.error()?.string("code") == "forbidden")
        bob.send("/kick alice")
        #expect(bob.error()?.string("code") == "forbidden")
        alice.send("/op bob")
        _ = bob.event("participant") { $0.object("participant")?.string("role") == "host" }
        bob.send("/play")
        #expect(alice.state("playing") != nil)
        alice.send("/kick bob")
        let closed = try #require(bob.waitClosed())
        #expect(closed.code == 4001)
        let left = try #require(alice.event("participant-left"))
        #expect(left.string("reason") == "kicked")
    }

    @Test("a reconnect with the resume token keeps id, name, role and suspensions, seen as a change, not a new member")
    func reconnect() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice", query: "player=1")
        let bob = try server.join(name: "bob")
        alice.send("/watch https://example.org/a.mp4\n/suspend audioSessionInterrupted")
        _ = bob.event("participant") { $0.string("change") == "suspended" }
        let welcome = try #require(alice.allFrames.compactMap { JSONObject($0) }.first { $0.string("type") == "welcome" })
        let token = try #require(welcome.string("resume"))
        alice.goAway()
        _ = bob.event("participant") { $0.string("change") == "disconnected" }
        let again = try server.join(name: "someone", query: "resume=\(token)")
        let you = try #require(again.allFrames.compactMap { JSONObject($0) }.first?.object("you"))
        #expect(you.string("id") == welcome.object("you")?.string("id"))
        #expect(you.string("name") == "alice")
        #expect(you.string("role") == "host")
        #expect(you.strings("suspensions") == ["audioSessionInterrupted"])
        #expect(you.bool("player") == true)
        #expect(bob.event("participant") { $0.string("change") == "reconnected" } != nil)
        #expect(bob.allFrames.allSatisfy { !$0.contains("participant-left") })
    }
}
