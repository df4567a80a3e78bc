import CowatchCore
import SlashCommands
import Testing

@Suite("Rule 4 (docs/concepts.md): a suspension separates a member from the group")
struct RuleSuspensionSeparatesTests {
    @Test("a suspended member's transport commands change nothing for the group")
    func suspendedTransportChangesNothing() {
        var room = Scenario.twoPlayersPlayingBobSuspended()
        let before = room.state
        for text in ["/pause", "/seek 90", "/rate 2", "/play now"] {
            room.say("bob", text)
            room.expectRefused("bob", .suspended)
            #expect(room.published.isEmpty)
        }
        #expect(room.state == before)
    }

    @Test("the group does not wait for a suspended player")
    func groupDoesNotWaitForSuspended() {
        Scenario.expectBobNotWaitedFor(after: "/suspend playingInterstitial")
    }

    @Test("a suspended member's end report does not end the item for the group")
    func suspendedEndedChangesNothing() {
        var room = Scenario.twoPlayersPlayingBobSuspended()
        room.expectUnchanged(when: "bob", says: "/ended \(room.state.seq)")
    }

    @Test("when its last suspension ends a member is handed the current group state and the group does not move")
    func resumeHandsTheGroupState() {
        var room = Scenario.twoPlayersPlayingBobSuspended()
        room.watchFor(seconds: 20)
        room.say("alice", "/seek 5:00")
        room.everyoneReady()
        let before = room.state
        room.say("bob", "/resume")
        #expect(room.participant("bob")?.suspensions == [])
        #expect(room.announced("bob", .resumed(nil)))
        #expect(room.handedState(to: "bob") == before)
        #expect(room.published.isEmpty)
        #expect(room.state == before)
    }

    @Test("resuming with a proposed time moves the whole group there")
    func resumeAtMovesTheGroup() {
        var room = Scenario.twoPlayersPlayingBobSuspended()
        room.watchFor(seconds: 20)
        room.say("bob", "/resume at 1:00")
        #expect(room.participant("bob")?.suspensions == [])
        room.expectPlayback(.waiting, position: 60, cause: .resume, by: "bob")
        room.everyoneReady()
        room.expectPlayback(.playing, position: 60)
    }
}

@Suite("Rule 5 (docs/concepts.md): suspensions stack")
struct RuleSuspensionsStackTests {
    @Test("a member stays suspended while any reason remains")
    func suspendedWhileAnyReasonRemains() {
        var room = Scenario.twoPlayersPlayingBobSuspended()
        room.say("bob", "/suspend audioSessionInterrupted")
        #expect(room.participant("bob")?.suspensions == [.userActionRequired, .audioSessionInterrupted])
        room.say("bob", "/resume userActionRequired")
        #expect(room.participant("bob")?.suspensions == [.audioSessionInterrupted])
        #expect(room.handedState(to: "bob") == nil)
        room.say("bob", "/pause")
        room.expectRefused("bob", .suspended)
        room.say("bob", "/resume audioSessionInterrupted")
        #expect(room.participant("bob")?.suspensions == [])
        #expect(room.handedState(to: "bob") == room.state)
    }

    @Test("/resume without a reason ends every suspension at once")
    func resumeEndsAll() {
        var room = Scenario.twoPlayers()
        room.say("bob", "/suspend", "/suspend myAd", "/resume")
        #expect(room.participant("bob")?.suspensions == [])
        #expect(room.handedState(to: "bob") == room.state)
    }

    @Test("a stall recovery stacks with a user suspension, and readiness ends only the stall")
    func stallStacksWithUserSuspension() {
        var room = Scenario.twoPlayersPlayingBobSuspended()
        room.say("bob", "/buffering")
        #expect(room.participant("bob")?.suspensions == [.userActionRequired, .stallRecovery])
        room.say("bob", "/ready \(room.state.seq)")
        #expect(room.participant("bob")?.suspensions == [.userActionRequired])
        #expect(room.handedState(to: "bob") == nil)
    }

    @Test("a catch-up ending by itself leaves a member suspended for its other reasons")
    func catchupEndStacks() {
        var room = Scenario.twoPlayersPlaying(for: 30)
        room.say("bob", "/catchup", "/suspend")
        room.advance(seconds: 10)
        #expect(room.participant("bob")?.suspensions == [.userActionRequired])
        #expect(room.handedState(to: "bob") == nil)
    }
}
