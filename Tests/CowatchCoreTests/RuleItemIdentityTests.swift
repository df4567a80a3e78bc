import CowatchCore
import SlashCommands
import Testing

@Suite("Rule 8 (docs/concepts.md): reports name the seq they answer")
struct RuleItemIdentityTests {
    @Test("a ready report for a state before the last seek does not count")
    func readyBeforeSeekIsIgnored() {
        var room = Scenario.twoPlayersWaiting()
        let firstWait = room.state.seq
        room.say("alice", "/seek 30")
        room.say("bob", "/ready \(firstWait)")
        #expect(room.participant("bob")?.ready == false)
        room.expectRefused("bob", .staleReport)
        #expect(room.published.isEmpty)
        room.say("alice", "/ready \(room.state.seq)")
        #expect(room.playback.status == .waiting)
    }

    @Test("a ready report for a seq not yet sent does not count")
    func readyFromTheFutureIsIgnored() {
        var room = Scenario.twoPlayersWaiting()
        room.say("bob", "/ready \(room.state.seq + 5)")
        #expect(room.last.count == 1)
        room.expectRefused("bob", .staleReport)
        #expect(room.error(for: "bob")?.message == "/ready \(room.state.seq + 5): no state \(room.state.seq + 5) was sent; the latest is \(room.state.seq)")
        #expect(room.participant("bob")?.ready == false)
    }

    @Test("a ready report for a state that did not move the position still counts")
    func readyAfterARateChangeCounts() {
        var room = Scenario.twoPlayersWaiting()
        let waitSeq = room.state.seq
        room.say("alice", "/rate 1.5")
        room.say("alice", "/ready \(waitSeq)")
        room.expectStartsOnceReady("bob")
    }

    @Test("a ready report for the previous item does not count for the new one")
    func readyForThePreviousItemIsIgnored() {
        var room = Scenario.twoPlayersWaiting()
        let oldItem = room.state.seq
        room.say("alice", "/watch https://example.org/b.mp4 Episode 2", "/play")
        room.say("bob", "/ready \(oldItem)")
        #expect(room.participant("bob")?.ready == false)
    }

    @Test("an ended report for the previous item changes nothing")
    func endedForThePreviousItemIsIgnored() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/queue https://example.org/b.mp4 Episode 2")
        room.playTogether(by: "alice")
        let oldItem = room.state.seq
        room.say("alice", "/next")
        room.playTogether(by: "alice")
        room.expectUnchanged(when: "bob", says: "/ended \(oldItem)")
        #expect(room.published.isEmpty)
    }

    @Test("an ended report for the current item counts after a seek within it")
    func endedForTheCurrentItemAfterASeekCounts() {
        var room = Scenario.twoPlayersPlaying()
        let itemPlaying = room.state.seq
        room.say("alice", "/seek 20:00")
        room.everyoneReady()
        room.say("bob", "/ended \(itemPlaying)")
        room.expectPlayback(.paused, cause: .ended)
    }
}

@Suite("Rule 9 (docs/concepts.md): replacing the activity resets playback")
struct RuleReplaceActivityTests {
    @Test("replacing the activity pauses everyone at 0 on the new item, keeping the rate")
    func replacingPausesAtZero() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/rate 1.5")
        room.playTogether(by: "alice")
        room.watchFor(seconds: 30)
        room.say("bob", "/watch https://example.org/b.mp4 Episode 2")
        room.expectPlayback(.paused, position: 0, item: "https://example.org/b.mp4", cause: .watch, by: "bob", rate: 1.5)
        #expect(room.state.session?.activity.title == "Episode 2")
        #expect(room.state.session?.state == .joined)
    }

    @Test("replacing the activity drops stall and catch-up suspensions and keeps the others")
    func replacingDropsItemSuspensions() {
        var room = Scenario.sharing("alice", "bob", "carol", "dave", players: ["alice", "bob"])
        room.playTogether(by: "alice")
        room.watchFor(seconds: 30)
        room.say("bob", "/buffering")
        room.say("carol", "/catchup")
        room.say("alice", "/suspend")
        #expect(room.armedCatchupEnds.count == 1)
        room.say("dave", "/watch https://example.org/b.mp4")
        #expect(room.participant("bob")?.suspensions == [])
        #expect(room.participant("carol")?.suspensions == [])
        #expect(room.participant("alice")?.suspensions == [.userActionRequired])
        #expect(room.armedCatchupEnds.isEmpty)
    }

    @Test("readiness for the old item does not carry over to the new one")
    func replacingDropsReadiness() {
        var room = Scenario.twoPlayersPlaying()
        #expect(room.participant("bob")?.ready == true)
        room.say("alice", "/watch https://example.org/b.mp4")
        #expect(room.participant("alice")?.ready == false)
        #expect(room.participant("bob")?.ready == false)
    }

    @Test("replacing the activity while waiting cancels the wait limit")
    func replacingWhileWaitingCancelsTheLimit() {
        var room = Scenario.twoPlayersWaiting()
        room.say("alice", "/watch https://example.org/b.mp4")
        #expect(room.armedWaitLimits.isEmpty)
        room.advance(seconds: 10)
        #expect(room.playback.status == .paused)
        #expect(room.participant("bob")?.suspensions == [])
    }

    @Test("/next replaces the activity with the queued item at 0, starting it together when the group was playing")
    func nextReplacesAtZero() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/queue https://example.org/b.mp4 Episode 2")
        room.playTogether(by: "alice")
        room.watchFor(seconds: 30)
        room.say("bob", "/buffering")
        room.say("alice", "/next")
        room.expectPlayback(.waiting, position: 0, item: "https://example.org/b.mp4")
        #expect(room.participant("bob")?.suspensions == [])
    }
}
