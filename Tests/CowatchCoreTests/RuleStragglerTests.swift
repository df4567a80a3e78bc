import CowatchCore
import SlashCommands
import Testing

@Suite("Rule 3 (docs/concepts.md): stragglers are left behind at the wait limit")
struct RuleStragglerTests {
    @Test("when the wait limit passes, players not ready get a stall recovery suspension and the group starts without them")
    func stragglersAreSuspended() {
        var room = Scenario.sharing("alice", "bob", "carol", players: ["alice", "bob", "carol"])
        room.say("alice", "/play")
        room.say("alice", "/ready \(room.state.seq)")
        room.advance(seconds: 5)
        room.expectPlayback(.playing, cause: .play, by: "alice")
        #expect(room.participant("alice")?.suspensions == [])
        #expect(room.participant("bob")?.suspensions == [.stallRecovery])
        #expect(room.participant("carol")?.suspensions == [.stallRecovery])
        #expect(room.announced("bob", .suspended(.stallRecovery)))
        #expect(room.notices.contains { $0.cause == .timeout && $0.text.contains("bob") && $0.text.contains("carol") })
    }

    @Test("the wait limit is the room's policy wait")
    func waitLimitFollowsThePolicy() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/policy wait 2", "/play")
        room.advance(milliseconds: 1999)
        #expect(room.playback.status == .waiting)
        room.advance(milliseconds: 1)
        #expect(room.playback.status == .playing)
        #expect(room.participant("bob")?.suspensions == [.stallRecovery])
    }

    @Test("a straggler that reports ready afterwards rejoins at group time")
    func stragglerRejoinsAtGroupTime() {
        var room = Scenario.twoPlayersWaitingForBob()
        room.advance(seconds: 5)
        room.advance(seconds: 3)
        let before = room.state
        room.say("bob", "/ready \(room.state.seq)")
        #expect(room.participant("bob")?.suspensions == [])
        #expect(room.handedState(to: "bob") == room.state)
        #expect(room.state == before)
    }

    @Test("when everyone is ready in time the wait limit is cancelled and nobody is suspended")
    func readyInTimeDisarmsTheLimit() {
        var room = Scenario.twoPlayersPlaying()
        #expect(room.armedWaitLimits.isEmpty)
        room.advance(seconds: 10)
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("the wait limit of an earlier wait does not cut a later one short")
    func earlierLimitsDoNotFireLater() {
        var room = Scenario.twoPlayersWaiting()
        room.advance(seconds: 3)
        room.say("alice", "/seek 30")
        room.advance(seconds: 2.5)
        #expect(room.playback.status == .waiting)
        room.advance(seconds: 2.5)
        room.expectPlayback(.playing, cause: .seek)
    }

    @Test("a player who suspends before the limit is not counted as a straggler")
    func suspendedPlayersAreNotStragglers() {
        var room = Scenario.twoPlayersWaitingForBob()
        room.say("bob", "/suspend")
        #expect(room.playback.status == .playing)
        room.advance(seconds: 5)
        #expect(room.participant("bob")?.suspensions == [.userActionRequired])
    }
}
