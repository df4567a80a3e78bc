import CowatchCore
import CowatchTime
import SlashCommands
import Testing

@Suite("/play and /play now")
struct CommandPlayTests {
    @Test("/play from paused makes the group wait at the held position with a new seq")
    func playWaits() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.say("alice", "/seek 33")
        room.expectNewState(when: "alice", says: "/play")
        room.expectPlayback(.waiting, position: 33)
        #expect(room.notices.contains { $0.cause == .play && $0.by == room.id("alice") })
    }

    @Test("/play with no player to wait for plays at once a lead ahead")
    func playWithoutPlayers() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/play")
        room.expectPlayback(.playing, anchor: room.now.advanced(by: Scenario.minimumLead), cause: .play, by: "bob")
    }

    @Test("/play keeps the room's rate")
    func playKeepsTheRate() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.say("alice", "/rate 1.5")
        room.playTogether(by: "alice")
        room.expectPlayback(.playing, rate: 1.5)
    }

    @Test("/play while playing or waiting only tells the sender")
    func playTwice() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.say("alice", "/play")
        room.expectOnlyTold("alice", after: "/play")
        room.everyoneReady()
        room.expectOnlyTold("bob", after: "/play")
    }

    @Test("/play now from paused plays a lead ahead without waiting")
    func playNowFromPaused() {
        var room = Scenario.twoPlayers()
        room.measure("bob", roundTrip: 300)
        room.say("alice", "/play now")
        room.expectPlayback(.playing, anchor: room.now.advanced(by: ServerInterval(milliseconds: 350)), cause: .play)
        #expect(room.armedWaitLimits.isEmpty)
    }

    @Test("/play now while waiting starts without the stragglers and cancels the wait limit")
    func playNowFromWaiting() {
        var room = Scenario.twoPlayersWaiting()
        room.say("alice", "/ready \(room.state.seq)", "/play now")
        #expect(room.playback.status == .playing)
        #expect(room.armedWaitLimits.isEmpty)
        room.advance(seconds: 10)
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("/play with anything but now is refused with bad arguments and the usage")
    func playBadArguments() {
        var room = Scenario.sharing("alice")
        room.expectBadArguments("/play later", usage: "usage: /play [now]")
        #expect(room.playback.status == .paused)
    }

    @Test("/play without a session, or from a member outside it, is refused with no-session")
    func playNoSession() {
        Scenario.expectRefusedWithoutSession("/play")
        var room = Scenario.sharing("alice", "bob")
        room.expectRefusedOutsideTheSession("bob", "/play now")
        #expect(room.playback.status == .paused)
    }

    @Test("/play from a non-host under control hosts is refused with forbidden, and hosts still play")
    func playForbidden() {
        var room = Scenario.sharing("alice", "bob")
        room.expectForbiddenUnderControlHosts("bob", "/play")
        #expect(room.playback.status == .paused)
        room.say("alice", "/play")
        #expect(room.playback.status == .playing)
    }

    @Test("/play from a suspended member is refused with suspended")
    func playSuspended() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/suspend", "/play")
        room.expectRefused("bob", .suspended)
        #expect(room.playback.status == .paused)
    }

    @Test("refusals come in order: no-session before forbidden before suspended")
    func refusalOrder() {
        var room = Scenario.sharing("alice", "bob", "carol")
        room.say("bob", "/suspend")
        room.say("carol", "/leave")
        room.say("alice", "/policy control hosts")
        room.say("carol", "/play")
        room.expectRefused("carol", .noSession)
        room.say("bob", "/play")
        room.expectRefused("bob", .forbidden)
        room.say("alice", "/op bob")
        room.say("bob", "/play")
        room.expectRefused("bob", .suspended)
    }
}

@Suite("/pause")
struct CommandPauseTests {
    @Test("/pause while playing holds everyone at the current group position")
    func pauseWhilePlaying() {
        var room = Scenario.twoPlayersPlaying(for: 12)
        room.expectNewState(when: "bob", says: "/pause")
        room.expectPlayback(.paused, position: 12, anchor: room.now, cause: .pause, by: "bob")
        #expect(room.notices.contains { $0.cause == .pause && $0.text.contains("0:12") })
        room.advance(seconds: 5)
        #expect(room.position == 12)
    }

    @Test("/pause before the start instant holds the start position")
    func pauseBeforeTheStart() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/seek 7")
        room.playTogether(by: "alice")
        room.say("bob", "/pause")
        #expect(room.playback.position.seconds == 7)
    }

    @Test("/pause while waiting pauses at the held position and cancels the wait limit")
    func pauseWhileWaiting() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/seek 25", "/play")
        room.say("bob", "/pause")
        room.expectPlayback(.paused, position: 25)
        #expect(room.armedWaitLimits.isEmpty)
        room.advance(seconds: 10)
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("/pause while paused only tells the sender")
    func pauseWhilePaused() {
        Scenario.expectOnlyTold("bob", after: "/pause", in: .sharing("alice", "bob"))
    }

    @Test("/pause with an argument is refused with bad arguments and the usage")
    func pauseBadArguments() {
        Scenario.expectBadArguments("/pause 10", usage: "usage: /pause")
    }

    @Test("/pause is refused with no-session, forbidden and suspended as /play is")
    func pauseRefusals() {
        var room = Scenario.sharing("alice", "bob", "carol")
        room.playTogether(by: "alice")
        room.expectRefusedOutsideSuspendedAndForbidden("/pause")
        #expect(room.playback.status == .playing)
    }
}
