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
        let before = room.state.seq
        room.say("alice", "/play")
        #expect(room.playback.status == .waiting)
        #expect(room.playback.position.seconds == 33)
        #expect(room.state.seq == before + 1)
        #expect(room.notices.contains { $0.cause == .play && $0.by == room.id("alice") })
    }

    @Test("/play with no player to wait for plays at once a lead ahead")
    func playWithoutPlayers() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/play")
        #expect(room.playback.status == .playing)
        #expect(room.playback.at == room.now.advanced(by: Scenario.minimumLead))
        #expect(room.playback.cause == .play)
        #expect(room.playback.by == room.id("bob"))
    }

    @Test("/play keeps the room's rate")
    func playKeepsTheRate() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.say("alice", "/rate 1.5")
        room.playTogether(by: "alice")
        #expect(room.playback.status == .playing)
        #expect(room.playback.rate.value == 1.5)
    }

    @Test("/play while playing or waiting only tells the sender")
    func playTwice() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.say("alice", "/play")
        let waiting = room.state
        room.say("alice", "/play")
        #expect(room.told("alice").count == 1)
        #expect(room.state == waiting)
        room.everyoneReady()
        let playing = room.state
        room.say("bob", "/play")
        #expect(room.told("bob").count == 1)
        #expect(room.state == playing)
    }

    @Test("/play now from paused plays a lead ahead without waiting")
    func playNowFromPaused() {
        var room = Scenario.sharing("alice", "bob", players: ["alice", "bob"])
        room.measure("bob", roundTrip: 300)
        room.say("alice", "/play now")
        #expect(room.playback.status == .playing)
        #expect(room.playback.at == room.now.advanced(by: ServerInterval(milliseconds: 350)))
        #expect(room.playback.cause == .play)
        #expect(room.armedWaitLimits.isEmpty)
    }

    @Test("/play now while waiting starts without the stragglers and cancels the wait limit")
    func playNowFromWaiting() {
        var room = Scenario.sharing("alice", "bob", players: ["alice", "bob"])
        room.say("alice", "/play")
        room.say("alice", "/ready \(room.state.seq)")
        room.say("alice", "/play now")
        #expect(room.playback.status == .playing)
        #expect(room.armedWaitLimits.isEmpty)
        room.advance(seconds: 10)
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("/play with anything but now is refused with bad arguments and the usage")
    func playBadArguments() {
        var room = Scenario.sharing("alice")
        room.say("alice", "/play later")
        #expect(room.error(for: "alice")?.code == .badArguments)
        #expect(room.error(for: "alice")?.message.contains("usage: /play [now]") == true)
        #expect(room.playback.status == .paused)
    }

    @Test("/play without a session, or from a member outside it, is refused with no-session")
    func playNoSession() {
        var room = Scenario()
        room.connect("alice")
        room.say("alice", "/play")
        #expect(room.error(for: "alice")?.code == .noSession)
        var shared = Scenario.sharing("alice", "bob")
        shared.say("bob", "/leave")
        shared.say("bob", "/play now")
        #expect(shared.error(for: "bob")?.code == .noSession)
        #expect(shared.playback.status == .paused)
    }

    @Test("/play from a non-host under control hosts is refused with forbidden, and hosts still play")
    func playForbidden() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/policy control hosts")
        room.say("bob", "/play")
        #expect(room.error(for: "bob")?.code == .forbidden)
        #expect(room.playback.status == .paused)
        room.say("alice", "/play")
        #expect(room.playback.status == .playing)
    }

    @Test("/play from a suspended member is refused with suspended")
    func playSuspended() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/suspend")
        room.say("bob", "/play")
        #expect(room.error(for: "bob")?.code == .suspended)
        #expect(room.playback.status == .paused)
    }

    @Test("refusals come in order: no-session before forbidden before suspended")
    func refusalOrder() {
        var room = Scenario.sharing("alice", "bob", "carol")
        room.say("bob", "/suspend")
        room.say("carol", "/leave")
        room.say("alice", "/policy control hosts")
        room.say("carol", "/play")
        #expect(room.error(for: "carol")?.code == .noSession)
        room.say("bob", "/play")
        #expect(room.error(for: "bob")?.code == .forbidden)
        room.say("alice", "/op bob")
        room.say("bob", "/play")
        #expect(room.error(for: "bob")?.code == .suspended)
    }
}

@Suite("/pause")
struct CommandPauseTests {
    @Test("/pause while playing holds everyone at the current group position")
    func pauseWhilePlaying() {
        var room = Scenario.sharing("alice", "bob", players: ["alice", "bob"])
        room.playTogether(by: "alice")
        room.watchFor(seconds: 12)
        let before = room.state.seq
        room.say("bob", "/pause")
        #expect(room.playback.status == .paused)
        #expect(room.playback.position.seconds == 12)
        #expect(room.playback.at == room.now)
        #expect(room.playback.cause == .pause)
        #expect(room.playback.by == room.id("bob"))
        #expect(room.state.seq == before + 1)
        #expect(room.notices.contains { $0.cause == .pause && $0.text.contains("0:12") })
        room.advance(seconds: 5)
        #expect(room.position == 12)
    }

    @Test("/pause before the start instant holds the start position")
    func pauseBeforeTheStart() {
        var room = Scenario.sharing("alice", "bob", players: ["alice", "bob"])
        room.say("alice", "/seek 7")
        room.playTogether(by: "alice")
        room.say("bob", "/pause")
        #expect(room.playback.position.seconds == 7)
    }

    @Test("/pause while waiting pauses at the held position and cancels the wait limit")
    func pauseWhileWaiting() {
        var room = Scenario.sharing("alice", "bob", players: ["alice", "bob"])
        room.say("alice", "/seek 25")
        room.say("alice", "/play")
        room.say("bob", "/pause")
        #expect(room.playback.status == .paused)
        #expect(room.playback.position.seconds == 25)
        #expect(room.armedWaitLimits.isEmpty)
        room.advance(seconds: 10)
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("/pause while paused only tells the sender")
    func pauseWhilePaused() {
        var room = Scenario.sharing("alice", "bob")
        let before = room.state
        room.say("bob", "/pause")
        #expect(room.told("bob").count == 1)
        #expect(room.state == before)
    }

    @Test("/pause with an argument is refused with bad arguments and the usage")
    func pauseBadArguments() {
        var room = Scenario.sharing("alice")
        room.say("alice", "/pause 10")
        #expect(room.error(for: "alice")?.code == .badArguments)
        #expect(room.error(for: "alice")?.message.contains("usage: /pause") == true)
    }

    @Test("/pause is refused with no-session, forbidden and suspended as /play is")
    func pauseRefusals() {
        var room = Scenario.sharing("alice", "bob", "carol")
        room.playTogether(by: "alice")
        room.say("carol", "/leave")
        room.say("carol", "/pause")
        #expect(room.error(for: "carol")?.code == .noSession)
        room.say("bob", "/suspend")
        room.say("bob", "/pause")
        #expect(room.error(for: "bob")?.code == .suspended)
        room.say("bob", "/resume")
        room.say("alice", "/policy control hosts")
        room.say("bob", "/pause")
        #expect(room.error(for: "bob")?.code == .forbidden)
        #expect(room.playback.status == .playing)
    }
}
