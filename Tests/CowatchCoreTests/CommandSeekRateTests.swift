import CowatchCore
import SlashCommands
import Testing

@Suite("/seek")
struct CommandSeekTests {
    @Test("/seek while paused stays paused at the target")
    func seekWhilePaused() {
        var room = Scenario.twoPlayers()
        room.advance(seconds: 2)
        room.expectNewState(when: "bob", says: "/seek 1:35")
        room.expectPlayback(.paused, position: 95, anchor: room.now, cause: .seek, by: "bob")
        #expect(room.armedWaitLimits.isEmpty)
    }

    @Test("/seek accepts seconds with a fraction and hours")
    func seekFormats() {
        var room = Scenario.sharing("alice")
        room.say("alice", "/seek 95.5")
        #expect(room.playback.position.seconds == 95.5)
        room.say("alice", "/seek 1:01:35")
        #expect(room.playback.position.seconds == 3695)
    }

    @Test("/seek while playing makes the group wait at the target")
    func seekWhilePlaying() {
        var room = Scenario.twoPlayersPlaying(for: 5)
        room.say("bob", "/seek 42")
        room.expectPlayback(.waiting, position: 42, cause: .seek)
        #expect(room.notices.contains { $0.cause == .seek && $0.text.contains("0:42") })
    }

    @Test("/seek while waiting waits again at the target with a new seq and a new wait limit")
    func seekWhileWaiting() {
        var room = Scenario.twoPlayersWaiting()
        room.expectNewState(when: "bob", says: "/seek 10")
        #expect(room.playback.status == .waiting)
        #expect(room.armedWaitLimits == [.waitLimit(anchor: room.state.seq)])
    }

    @Test("/seek +10 and /seek -10 count from the group position now")
    func seekRelative() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/seek 1:00", "/play")
        room.watchFor(seconds: 20)
        room.say("bob", "/seek +10")
        #expect(room.playback.position.seconds == 90)
        room.watchFor(seconds: 5)
        room.say("bob", "/seek -10")
        #expect(room.playback.position.seconds == 85)
    }

    @Test("/seek with something that is not a time is refused with bad arguments and the usage")
    func seekBadArguments() {
        var room = Scenario.sharing("alice")
        room.expectBadArguments("/seek abc", "/seek", "/seek 1:75", "/seek 10 20", "/seek 1e3", command: .seek,
                                usage: "usage: /seek <time>")
        #expect(room.playback.position == .zero)
    }

    @Test("/seek is refused with no-session, forbidden and suspended")
    func seekRefusals() {
        var room = Scenario.sharing("alice", "bob", "carol")
        room.expectRefusedOutsideSuspendedAndForbidden("/seek 10")
        #expect(room.playback.position == .zero)
    }
}

@Suite("/rate")
struct CommandRateTests {
    @Test("/rate while paused changes the rate and holds the position")
    func rateWhilePaused() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/seek 30")
        room.expectNewState(when: "bob", says: "/rate 1.5")
        room.expectPlayback(.paused, position: 30, cause: .rate, by: "bob", rate: 1.5)
        #expect(room.notices.contains { $0.cause == .rate && $0.text.contains("1.5x") })
    }

    @Test("/rate while playing re-anchors at the current position so the media time stays continuous")
    func rateWhilePlaying() {
        var room = Scenario.twoPlayersPlaying(for: 10)
        room.say("bob", "/rate 2")
        room.expectPlayback(.playing, position: 10, anchor: room.now)
        room.advance(seconds: 5)
        #expect(room.position == 20)
    }

    @Test("the rate is the room's: a new item keeps it, and its notice says so when it is not 1")
    func rateOutlivesTheItem() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/rate 1.5", "/queue https://example.org/next.mp4 Next")
        room.say("bob", "/watch https://example.org/other.mp4 Other")
        #expect(room.playback.rate.value == 1.5)
        #expect(room.notices.contains { $0.cause == .watch && $0.text.hasSuffix("\"Other\" (at 1.5x, the room's rate; /rate 1 for normal speed)") })
        room.say("alice", "/rate 1", "/next")
        #expect(room.notices.contains { $0.cause == .next && $0.text.hasSuffix("to \"Next\"") })
    }

    @Test("/rate while waiting keeps the group waiting")
    func rateWhileWaiting() {
        var room = Scenario.twoPlayersWaiting()
        room.say("bob", "/rate 0.5")
        room.expectPlayback(.waiting, rate: 0.5)
        room.everyoneReady()
        room.expectPlayback(.playing, rate: 0.5)
    }

    @Test("/rate accepts a trailing x")
    func rateWithX() {
        var room = Scenario.sharing("alice")
        room.say("alice", "/rate 2x")
        #expect(room.playback.rate.value == 2)
    }

    @Test("/rate to the current rate only tells the sender")
    func rateSame() {
        Scenario.expectOnlyTold("bob", after: "/rate 1", in: .sharing("alice", "bob"))
    }

    @Test("/rate out of range or not a number is refused with bad arguments and the usage")
    func rateBadArguments() {
        var room = Scenario.sharing("alice")
        room.expectBadArguments("/rate 9", "/rate abc", "/rate", "/rate -1", "/rate 0.1", command: .rate,
                                usage: "usage: /rate <rate>")
        #expect(room.playback.rate == .normal)
    }

    @Test("/rate is refused with no-session, forbidden and suspended")
    func rateRefusals() {
        Scenario.expectRefusedWithoutSession("/rate 2")
        var room = Scenario.sharing("alice", "bob", "carol")
        room.expectRefusedOutsideSuspendedAndForbidden("/rate 2")
        #expect(room.playback.rate == .normal)
    }
}
