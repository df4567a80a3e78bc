import CowatchCore
import CowatchTime
import SlashCommands
import Testing

@Suite("/suspend")
struct CommandSuspendTests {
    @Test("/suspend separates the member for userActionRequired by default and tells everyone")
    func suspendDefaultReason() {
        var room = Scenario.twoPlayersPlaying()
        let before = room.state
        room.say("bob", "/suspend")
        #expect(room.participant("bob")?.suspensions == [.userActionRequired])
        #expect(room.announced("bob", .suspended(.userActionRequired)))
        #expect(room.events(for: "alice").count == 1)
        #expect(room.state == before)
    }

    @Test("/suspend takes a known reason or a custom name")
    func suspendReasons() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/suspend coordinatedPlaybackNotPossible", "/suspend bathroom-break")
        #expect(room.participant("bob")?.suspensions.map(\.rawValue) == ["coordinatedPlaybackNotPossible", "bathroom-break"])
    }

    @Test("/suspend for a reason already held only tells the sender")
    func suspendTwice() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/suspend", "/suspend userActionRequired")
        #expect(room.told("bob").count == 1)
        #expect(room.participantChanges.isEmpty)
        #expect(room.participant("bob")?.suspensions == [.userActionRequired])
    }

    @Test("/suspend of the last unready player lets a waiting group start")
    func suspendStartsAWaitingGroup() {
        var room = Scenario.twoPlayersWaitingForBob()
        room.say("bob", "/suspend")
        #expect(room.playback.status == .playing)
    }

    @Test("/suspend with a reason that is not a name is refused with bad arguments and the usage")
    func suspendBadArguments() {
        var room = Scenario.sharing("alice")
        room.expectBadArguments("/suspend not!ok", "/suspend two words", usage: "usage: /suspend [reason]")
        #expect(room.participant("alice")?.suspensions == [])
    }

    @Test("/suspend outside a session is refused with no-session")
    func suspendNoSession() {
        var room = Scenario.sharing("alice", "bob")
        room.expectRefusedOutsideTheSession("bob", "/suspend")
    }
}

@Suite("/resume")
struct CommandResumeTests {
    @Test("/resume when not suspended is refused with not-suspended")
    func resumeNotSuspended() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/resume")
        room.expectRefused("bob", .notSuspended)
    }

    @Test("/resume for a reason not held is refused with not-suspended and keeps the others")
    func resumeOtherReason() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/suspend", "/resume audioSessionInterrupted")
        room.expectRefused("bob", .notSuspended)
        #expect(room.participant("bob")?.suspensions == [.userActionRequired])
    }

    @Test("/resume of one reason announces that reason")
    func resumeOneReason() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/suspend", "/resume userActionRequired")
        #expect(room.announced("bob", .resumed(.userActionRequired)))
        #expect(room.handedState(to: "bob") == room.state)
    }

    @Test("/resume at a time while paused moves the group there, suspended or not")
    func resumeAtWhilePaused() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/resume at 1:30")
        room.expectPlayback(.paused, position: 90, cause: .resume, by: "bob")
        #expect(room.notices.contains { $0.cause == .resume })
    }

    @Test("/resume at +30 counts from the group position now")
    func resumeAtRelative() {
        var room = Scenario.sharing("alice", "bob", players: ["alice"])
        room.playTogether(by: "alice")
        room.watchFor(seconds: 15)
        room.say("bob", "/suspend", "/resume at +30")
        room.expectPlayback(.waiting, position: 45)
    }

    @Test("/resume at needs control: a non-host under control hosts is refused with forbidden and stays suspended")
    func resumeAtForbidden() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/policy control hosts")
        room.say("bob", "/suspend", "/resume at 30")
        room.expectRefused("bob", .forbidden)
        #expect(room.participant("bob")?.suspensions == [.userActionRequired])
        #expect(room.playback.position == .zero)
        room.say("bob", "/resume")
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("/resume outside a session is refused with no-session")
    func resumeNoSession() {
        var room = Scenario.sharing("alice", "bob")
        room.expectRefusedOutsideTheSession("bob", "/resume at 10")
        #expect(room.playback.position == .zero)
    }

    @Test("/resume with at but no time, or a bad time, is refused with bad arguments and the usage")
    func resumeBadArguments() {
        Scenario.expectBadArguments("/resume at", "/resume at soon", "/resume userActionRequired at",
                                    "/resume bad! at 10", usage: "usage: /resume [reason] [at <time>]")
    }

    @Test("/resume with a word other than at before the time is refused with bad arguments")
    func resumeRequiresTheWordAt() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/suspend", "/resume userActionRequired later 30")
        room.expectRefused("bob", .badArguments)
        #expect(room.playback.position == .zero)
        #expect(room.participant("bob")?.suspensions == [.userActionRequired])
    }
}

@Suite("/catchup")
struct CommandCatchupTests {
    @Test("/catchup sends the member alone a replay from 10 s back at 2x until level with the group")
    func catchupDefault() {
        var room = Scenario.twoPlayersPlaying(for: 30)
        let before = room.state
        room.say("bob", "/catchup")
        let catchup = room.catchup(for: "bob")
        #expect(catchup?.from.seconds == 20)
        #expect(catchup?.rate.value == 2)
        #expect(catchup?.until == room.now.advanced(by: ServerInterval(milliseconds: 10_000)))
        #expect(room.catchup(for: "alice") == nil)
        #expect(room.participant("bob")?.suspensions == [.catchup])
        #expect(room.notices.contains { $0.cause == .catchup && $0.by == room.id("bob") })
        #expect(room.state == before)
    }

    @Test("/catchup 25 rewinds 25 seconds")
    func catchupSeconds() {
        var room = Scenario.twoPlayersPlaying(for: 30)
        room.say("bob", "/catchup 25")
        #expect(room.catchup(for: "bob")?.from.seconds == 5)
        #expect(room.catchup(for: "bob")?.until == room.now.advanced(by: ServerInterval(milliseconds: 25_000)))
    }

    @Test("/catchup while paused replays in half the rewind")
    func catchupWhilePaused() {
        var room = Scenario.twoPlayersPlaying(for: 30)
        room.say("alice", "/pause")
        room.say("bob", "/catchup")
        #expect(room.catchup(for: "bob")?.from.seconds == 20)
        #expect(room.catchup(for: "bob")?.until == room.now.advanced(by: ServerInterval(milliseconds: 5000)))
    }

    @Test("the catch-up suspension ends by itself when its timer fires and the member is handed the state")
    func catchupEndsByItself() {
        var room = Scenario.twoPlayersPlaying(for: 30)
        room.say("bob", "/catchup")
        room.advance(milliseconds: 9999)
        #expect(room.participant("bob")?.suspensions == [.catchup])
        room.advance(milliseconds: 1)
        #expect(room.participant("bob")?.suspensions == [])
        #expect(room.announced("bob", .resumed(.catchup)))
        #expect(room.handedState(to: "bob") == room.state)
    }

    @Test("/resume catchup ends the replay early and cancels its timer")
    func catchupEndedEarly() {
        var room = Scenario.twoPlayersPlaying(for: 30)
        room.say("bob", "/catchup", "/resume catchup")
        #expect(room.participant("bob")?.suspensions == [])
        #expect(room.armedCatchupEnds.isEmpty)
    }

    @Test("a second /catchup restarts the replay with a new end")
    func catchupTwice() {
        var room = Scenario.twoPlayersPlaying(for: 30)
        room.say("bob", "/catchup")
        room.advance(seconds: 4)
        room.say("bob", "/catchup 20")
        #expect(room.catchup(for: "bob")?.from.seconds == 14)
        #expect(room.armedCatchupEnds.count == 1)
        room.advance(seconds: 6)
        #expect(room.participant("bob")?.suspensions == [.catchup])
        room.advance(seconds: 14)
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("/catchup when the group plays at 2x or faster is refused with not-possible")
    func catchupTooFast() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/rate 2")
        room.playTogether(by: "alice")
        room.watchFor(seconds: 30)
        room.say("bob", "/catchup")
        room.expectRefused("bob", .notPossible)
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("/catchup at the very start is refused with not-possible")
    func catchupAtTheStart() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/catchup")
        room.expectRefused("bob", .notPossible)
    }

    @Test("/catchup with seconds that are not from 0 to 600 is refused with bad arguments and the usage")
    func catchupBadArguments() {
        var room = Scenario.twoPlayersPlaying(for: 30)
        room.expectBadArguments("/catchup 0", "/catchup 601", "/catchup abc", "/catchup 5 6", from: "bob",
                                usage: "usage: /catchup [seconds]")
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("/catchup outside a session is refused with no-session")
    func catchupNoSession() {
        var room = Scenario.twoPlayersPlaying(for: 30)
        room.expectRefusedOutsideTheSession("bob", "/catchup")
    }
}
