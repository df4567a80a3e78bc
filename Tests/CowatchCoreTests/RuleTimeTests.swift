import CowatchCore
import CowatchTime
import SlashCommands
import Testing

@Suite("Rule 11 (docs/concepts.md): time is explicit")
struct RuleTimeTests {
    static func script() -> Scenario {
        var room = Scenario.twoPlayers()
        room.measure("bob", roundTrip: 230)
        room.say("alice", "/play")
        room.say("alice", "/ready \(room.state.seq)")
        room.advance(seconds: 5)
        room.say("bob", "/buffering")
        room.say("alice", "/catchup 3")
        return room
    }

    @Test("the same inputs at the same instants give the same actions and the same state")
    func sameInputsSameOutputs() {
        let first = Self.script()
        let second = Self.script()
        #expect(first.last == second.last)
        #expect(first.state == second.state)
        #expect(first.inbox == second.inbox)
    }

    @Test("the same inputs give the same actions when a new item drops several members' suspensions (in order of arrival)")
    func sameOutputsWhenDroppingSuspensions() {
        let orders = (0..<12).map { _ -> [String] in
            var room = Scenario.sharing("alice", "bob", "carol", "dave", "erin", players: ["alice", "bob", "carol", "dave"])
            room.playTogether(by: "alice")
            room.watchFor(seconds: 30)
            room.say("bob", "/buffering")
            room.say("carol", "/buffering")
            room.say("dave", "/catchup")
            room.say("erin", "/catchup")
            room.say("alice", "/watch https://example.org/b.mp4")
            return room.participantChanges.map(\.0.name.text)
        }
        #expect(orders.allSatisfy { $0 == ["bob", "carol", "dave", "erin"] })
    }

    @Test("the wait limit is a timer the room schedules, due exactly the policy wait after the start")
    func waitLimitIsAScheduledTimer() {
        var room = Scenario.twoPlayersWaiting()
        let timer = RoomTimer.waitLimit(anchor: room.state.seq)
        #expect(room.scheduled.contains { $0.0 == timer && $0.1 == room.now.advanced(by: ServerInterval(milliseconds: 5000)) })
        room.advance(milliseconds: 4999)
        #expect(room.playback.status == .waiting)
        room.advance(milliseconds: 1)
        #expect(room.playback.status == .playing)
    }

    @Test("nothing happens between inputs however much time passes")
    func nothingMovesWithoutAnInput() {
        var room = Scenario.twoPlayersPlaying()
        let before = room.state
        room.watchFor(seconds: 3600)
        #expect(room.last.isEmpty)
        #expect(room.state == before)
        #expect(room.position == 3600)
    }

    @Test("a timer fired after the situation moved on changes nothing")
    func staleTimersAreIgnored() {
        var room = Scenario.twoPlayersWaiting()
        let first = RoomTimer.waitLimit(anchor: room.state.seq)
        room.say("alice", "/seek 20")
        #expect(!room.isArmed(first))
        let before = room.state
        let actions = room.fireStale(first, inMilliseconds: 5000)
        #expect(actions.isEmpty)
        #expect(room.room.state == before)
    }

    @Test("the group position is computed from the now of the input")
    func positionsComeFromNow() {
        var room = Scenario.twoPlayersPlaying(for: 7)
        room.say("bob", "/status")
        guard case .status(_, let position, let now)? = room.reply(for: "bob") else {
            Issue.record("no status reply")
            return
        }
        #expect(position.seconds == 7)
        #expect(now == room.now)
    }
}

@Suite("Rule 12 (docs/concepts.md): positions never below 0, rates within 0.25 to 4, relative seeks from the group position")
struct RuleBoundsTests {
    @Test("a relative seek before the start lands at 0")
    func relativeSeekClampsAtZero() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/seek 5", "/seek -30")
        room.expectPlayback(.paused, position: 0)
    }

    @Test("a proposed resume time before the start lands at 0")
    func resumeAtClampsAtZero() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/seek 8")
        room.say("bob", "/suspend", "/resume at -1:00")
        room.expectPlayback(position: 0, cause: .resume)
    }

    @Test("a catch-up near the start rewinds to 0, not below")
    func catchupClampsAtZero() {
        var room = Scenario.twoPlayersPlaying(for: 4)
        room.say("bob", "/catchup 10")
        #expect(room.catchup(for: "bob")?.from == .zero)
        #expect(room.catchup(for: "bob")?.until == room.now.advanced(by: ServerInterval(milliseconds: 4000)))
    }

    @Test("rates outside 0.25 to 4 are refused and the rate stays")
    func ratesOutOfBoundsAreRefused() {
        var room = Scenario.twoPlayers()
        for text in ["/rate 0.2", "/rate 4.5", "/rate 0"] {
            room.say("alice", text)
            room.expectRefused("alice", .badArguments)
        }
        #expect(room.playback.rate == .normal)
    }

    @Test("the rates 0.25 and 4 themselves are accepted")
    func rateBoundsAreAccepted() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/rate 0.25")
        #expect(room.playback.rate.value == 0.25)
        room.say("alice", "/rate 4")
        #expect(room.playback.rate.value == 4)
    }

    @Test("a relative seek while playing counts from the group position when it is handled")
    func relativeSeekFromGroupPosition() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/seek 10", "/rate 2")
        room.playTogether(by: "alice")
        room.watchFor(seconds: 5)
        room.say("bob", "/seek +10")
        room.expectPlayback(.waiting, position: 30)
    }

    @Test("a relative seek while paused counts from the held position")
    func relativeSeekWhilePaused() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/seek 1:00")
        room.advance(seconds: 30)
        room.say("bob", "/seek -15")
        #expect(room.playback.position.seconds == 45)
    }
}
