import CowatchCore
import CowatchTime
import SlashCommands
import Testing

@Suite("Coordinated start from end to end (docs/concepts.md, rule 2)")
struct CoordinatedStartTests {
    static func roomWithTwoPlayers() -> Scenario {
        var room = Scenario()
        room.connect("alice", player: true)
        room.connect("bob", player: true)
        room.say("alice", "/watch https://example.org/a.mp4 Episode 1")
        return room
    }

    @Test("/play waits until every player reports ready, then plays with a start in the near future")
    func playWaitsForEveryone() {
        var room = Self.roomWithTwoPlayers()
        room.say("alice", "/play")
        #expect(room.playback.status == .waiting)
        room.expectStartsOnceReady("alice", "bob")
        #expect(room.playback.at > room.now)
        #expect(room.playback.at.interval(since: room.now) <= ServerInterval(milliseconds: 1000))
        room.expectPlayback(cause: .play, by: "alice")
    }
}

@Suite("Rule 2 (docs/concepts.md): coordinated start")
struct RuleCoordinatedStartTests {
    @Test("/play from paused moves to waiting with a new seq and arms the wait limit")
    func playWaits() {
        var room = Scenario.twoPlayers()
        room.expectNewState(when: "bob", says: "/play")
        #expect(room.playback.status == .waiting)
        room.expectPlayback(cause: .play, by: "bob")
        #expect(room.armedWaitLimits == [.waitLimit(anchor: room.state.seq)])
    }

    @Test("the group waits for the last player and for nobody who is not a player")
    func onlyPlayersAreWaitedFor() {
        var room = Scenario.sharing("alice", "bob", "carol", players: ["bob"])
        room.say("alice", "/play")
        #expect(room.playback.status == .waiting)
        room.expectStartsOnceReady("bob")
        #expect(room.armedWaitLimits.isEmpty)
    }

    @Test("a player outside the session is not waited for")
    func playersOutsideTheSessionAreNotWaitedFor() {
        Scenario.expectBobNotWaitedFor(after: "/leave")
    }

    @Test("with no player to wait for, /play starts at once a lead ahead")
    func noPlayersStartsAtOnce() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/play")
        room.expectPlayback(.playing, anchor: room.now.advanced(by: Scenario.minimumLead))
        #expect(room.armedWaitLimits.isEmpty)
    }

    @Test("the start instant covers the slowest measured round trip plus 50 ms")
    func leadCoversTheSlowestRoundTrip() {
        var room = Scenario.sharing("alice", "bob", "carol", players: ["alice", "bob"])
        room.measure("alice", roundTrip: 120)
        room.measure("carol", roundTrip: 400)
        room.playTogether(by: "alice")
        #expect(room.playback.at == room.now.advanced(by: ServerInterval(milliseconds: 450)))
    }

    @Test("the lead is at least 150 ms and at most one second")
    func leadIsBounded() {
        var room = Scenario.twoPlayers()
        room.measure("bob", roundTrip: 20)
        room.playTogether(by: "alice")
        #expect(room.playback.at == room.now.advanced(by: ServerInterval(milliseconds: 150)))
        room.say("alice", "/pause")
        room.measure("bob", roundTrip: 3000)
        room.playTogether(by: "alice")
        #expect(room.playback.at == room.now.advanced(by: ServerInterval(milliseconds: 1000)))
    }

    @Test("a /ready that asks for a lead lengthens the start's by it, within the bound")
    func readyAsksForALead() {
        var room = Scenario.twoPlayers()
        room.measure("bob", roundTrip: 30)
        room.say("alice", "/play")
        let seq = room.state.seq
        room.say("alice", "/ready \(seq) lead 600")
        room.say("bob", "/ready \(seq)")
        #expect(room.playback.status == .playing)
        #expect(room.playback.at == room.now.advanced(by: ServerInterval(milliseconds: 680)))
        room.say("alice", "/pause")
        room.say("alice", "/play")
        room.say("alice", "/ready \(room.state.seq) lead 1000")
        room.say("bob", "/ready \(room.state.seq)")
        #expect(room.playback.at == room.now.advanced(by: ServerInterval(milliseconds: 1000)))
    }

    @Test("each /ready replaces the lead its player asked for; a suspended player's does not count")
    func askedLeadIsTheLatestOfPlayersWaitedFor() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/play")
        room.say("alice", "/ready \(room.state.seq) lead 400")
        room.say("bob", "/ready \(room.state.seq)")
        #expect(room.playback.at == room.now.advanced(by: ServerInterval(milliseconds: 450)))
        room.say("alice", "/pause")
        room.say("alice", "/play")
        room.everyoneReady()
        #expect(room.playback.at == room.now.advanced(by: Scenario.minimumLead))
        room.say("alice", "/pause")
        room.say("alice", "/play")
        room.say("bob", "/ready \(room.state.seq) lead 700")
        room.say("bob", "/suspend")
        room.say("alice", "/ready \(room.state.seq)")
        #expect(room.playback.status == .playing)
        #expect(room.playback.at == room.now.advanced(by: Scenario.minimumLead))
    }

    @Test("the round trip of a member outside the session does not lengthen the lead")
    func leadIgnoresMembersOutsideTheSession() {
        var room = Scenario.sharing("alice", "bob", "carol", players: ["alice", "bob"])
        room.say("carol", "/leave")
        room.measure("carol", roundTrip: 900)
        room.playTogether(by: "alice")
        #expect(room.playback.at == room.now.advanced(by: Scenario.minimumLead))
    }

    @Test("a seek while playing makes the group wait at the new position, then start together")
    func seekWhilePlayingWaits() {
        var room = Scenario.twoPlayersPlaying(for: 10)
        room.say("bob", "/seek 42")
        room.expectPlayback(.waiting, position: 42)
        room.everyoneReady()
        room.expectPlayback(.playing, position: 42, cause: .seek, by: "bob")
    }

    @Test("players are announced ready as they report, and the start is announced")
    func readinessIsAnnounced() {
        var room = Scenario.twoPlayersWaitingForBob()
        #expect(room.announced("alice", .ready))
        #expect(room.participant("alice")?.ready == true)
        #expect(room.participant("bob")?.ready == false)
        room.say("bob", "/ready \(room.state.seq)")
        #expect(room.notices.contains { $0.cause == .ready })
    }

    @Test("while waiting the position is held")
    func waitingHoldsThePosition() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/seek 12", "/play")
        room.advance(seconds: 3)
        #expect(room.position == 12)
    }
}
