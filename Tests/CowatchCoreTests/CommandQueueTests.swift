import CowatchCore
import CowatchTime
import SlashCommands
import Testing

@Suite("/queue")
struct CommandQueueTests {
    @Test("/queue alone lists the queue to the sender")
    func queueLists() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/queue https://example.org/b.mp4 Episode 2")
        room.say("bob", "/queue")
        guard case .queue(let items)? = room.reply(for: "bob") else {
            Issue.record("no queue reply")
            return
        }
        #expect(items.map(\.title) == ["Episode 2"])
        #expect(room.events(for: "alice").isEmpty)
    }

    @Test("/queue with a URL appends an item and publishes the state")
    func queueAdds() {
        var room = Scenario.sharing("alice", "bob")
        let before = room.state.seq
        room.say("bob", "/queue https://example.org/b.mp4 Episode 2", "/queue https://example.org/c.mp4")
        #expect(room.state.queue.map(\.url.text) == ["https://example.org/b.mp4", "https://example.org/c.mp4"])
        #expect(room.state.queue.map(\.title) == ["Episode 2", "c.mp4"])
        #expect(room.state.queue.map(\.id) == ["q1", "q2"])
        #expect(room.state.seq == before + 2)
        room.expectPlayback(item: "https://example.org/a.mp4", cause: .queue, by: "bob")
        #expect(room.notices.contains { $0.cause == .queue && $0.text.contains("c.mp4") })
    }

    @Test("/queue while playing leaves playback alone")
    func queueWhilePlaying() {
        var room = Scenario.sharing("alice", "bob", players: ["alice"])
        room.playTogether(by: "alice")
        let playback = room.playback
        room.say("bob", "/queue https://example.org/b.mp4")
        #expect(room.playback.status == .playing)
        #expect(room.playback.position == playback.position)
        #expect(room.playback.at == playback.at)
    }

    @Test("/queue from a non-host under control hosts is refused with forbidden")
    func queueForbidden() {
        var room = Scenario.sharing("alice", "bob")
        room.expectForbiddenUnderControlHosts("bob", "/queue https://example.org/b.mp4")
        #expect(room.state.queue.isEmpty)
        room.say("bob", "/queue")
        #expect(room.reply(for: "bob") == .queue([]))
    }

    @Test("/queue from a member outside the active session is refused with no-session")
    func queueOutsideTheSession() {
        var room = Scenario.sharing("alice", "bob")
        room.expectRefusedOutsideTheSession("bob", "/queue https://example.org/b.mp4")
        #expect(room.state.queue.isEmpty)
    }

    @Test("/queue on a full queue is refused with queue-full")
    func queueFull() {
        var room = Scenario.sharing("alice", configuration: RoomConfiguration(maximumQueueLength: 2))
        room.say("alice", "/queue https://example.org/b.mp4", "/queue https://example.org/c.mp4",
                 "/queue https://example.org/d.mp4")
        room.expectRefused("alice", .queueFull)
        #expect(room.state.queue.count == 2)
    }

    @Test("/queue with a URL that is not http or https is refused with bad arguments and the usage")
    func queueBadURL() {
        var room = Scenario.sharing("alice")
        room.expectBadArguments("/queue file:///etc/passwd", usage: "usage: /queue [<url> [title...]]")
        #expect(room.state.queue.isEmpty)
    }
}

@Suite("/next")
struct CommandNextTests {
    /// alice and bob sharing "Episode 1", with b.mp4 queued after it.
    static func oneQueued() -> Scenario {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/queue https://example.org/b.mp4")
        return room
    }

    @Test("/next while playing moves everyone to the first queued item and starts it together, keeping the rate")
    func nextAdvances() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/queue https://example.org/b.mp4 Episode 2", "/queue https://example.org/c.mp4 Episode 3",
                 "/rate 1.25")
        room.playTogether(by: "alice")
        room.watchFor(seconds: 40)
        room.say("bob", "/next")
        room.expectPlayback(.waiting, position: 0, item: "https://example.org/b.mp4", cause: .next, by: "bob", rate: 1.25)
        #expect(room.state.session?.activity.title == "Episode 2")
        #expect(room.state.queue.map(\.title) == ["Episode 3"])
        #expect(room.notices.contains { $0.cause == .next && $0.text.contains("Episode 2") })
        room.everyoneReady()
        room.expectPlayback(.playing, position: 0)
    }

    @Test("/next while paused moves everyone to the next item, paused at 0")
    func nextWhilePaused() {
        var room = Scenario.twoPlayers()
        room.say("alice", "/queue https://example.org/b.mp4 Episode 2", "/seek 30")
        room.say("bob", "/next")
        room.expectPlayback(.paused, position: 0, item: "https://example.org/b.mp4")
    }

    @Test("/next without a session starts one with the queued item")
    func nextStartsASession() {
        var room = Scenario.alone("alice")
        room.connect("bob")
        room.say("alice", "/queue https://example.org/b.mp4 Episode 2")
        room.say("bob", "/next")
        #expect(room.state.session?.state == .joined)
        #expect(room.state.session?.activity.title == "Episode 2")
        #expect(room.participant("alice")?.joined == true)
        #expect(room.state.queue.isEmpty)
    }

    @Test("/next on an empty queue is refused with queue-empty")
    func nextEmpty() {
        var room = Scenario.sharing("alice")
        room.say("alice", "/next")
        room.expectRefused("alice", .queueEmpty)
        #expect(room.playback.item == "https://example.org/a.mp4")
    }

    @Test("/next from a non-host under control hosts is refused with forbidden")
    func nextForbidden() {
        var room = Self.oneQueued()
        room.expectForbiddenUnderControlHosts("bob", "/next")
        #expect(room.state.queue.count == 1)
    }

    @Test("/next from a member outside the active session is refused with no-session")
    func nextOutsideTheSession() {
        var room = Self.oneQueued()
        room.expectRefusedOutsideTheSession("bob", "/next")
        #expect(room.state.queue.count == 1)
    }

    @Test("/next takes no arguments")
    func nextBadArguments() {
        Scenario.expectBadArguments("/next https://example.org/b.mp4", usage: "usage: /next")
    }
}

@Suite("/autoplay and the end of an item")
struct CommandAutoplayTests {
    @Test("/autoplay on records the preference and tells everyone")
    func autoplayOn() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/autoplay on")
        #expect(room.participant("bob")?.autoplay == true)
        #expect(room.announced("bob", .autoplay))
        room.say("bob", "/autoplay off")
        #expect(room.participant("bob")?.autoplay == false)
    }

    @Test("/autoplay to the current setting only tells the sender")
    func autoplaySame() {
        var room = Scenario.sharing("alice")
        room.expectOnlyTold("alice", after: "/autoplay off")
        #expect(room.participantChanges.isEmpty)
    }

    @Test("/autoplay with anything but on or off is refused with bad arguments and the usage")
    func autoplayBadArguments() {
        Scenario.expectBadArguments("/autoplay maybe", usage: "usage: /autoplay on|off")
    }

    @Test("when the item ends and one member has autoplay on, the room moves to the next item and starts together")
    func autoplayAdvances() {
        var room = Scenario.sharing("alice", "bob", "carol", players: ["alice", "bob"])
        room.say("carol", "/autoplay on")
        room.say("alice", "/queue https://example.org/b.mp4 Episode 2")
        room.playTogether(by: "alice")
        room.watchFor(seconds: 1400)
        room.say("bob", "/ended \(room.state.seq)")
        room.expectPlayback(.waiting, position: 0, item: "https://example.org/b.mp4", cause: .next)
        #expect(room.playback.by == nil)
        #expect(room.state.queue.isEmpty)
        room.everyoneReady()
        room.expectPlayback(.playing, cause: .next)
    }

    @Test("when the item ends with autoplay on but nothing queued, the room pauses")
    func autoplayWithEmptyQueue() {
        var room = Scenario.twoPlayers()
        room.say("bob", "/autoplay on")
        room.playTogether(by: "alice")
        room.watchFor(seconds: 60)
        room.say("bob", "/ended \(room.state.seq)")
        room.expectPlayback(.paused, item: "https://example.org/a.mp4", cause: .ended)
    }

    @Test("the autoplay of a member outside the session does not advance the room")
    func autoplayOutsideTheSession() {
        var room = Scenario.sharing("alice", "bob", "carol", players: ["alice", "bob"])
        room.say("carol", "/autoplay on", "/leave")
        room.say("alice", "/queue https://example.org/b.mp4")
        room.playTogether(by: "alice")
        room.say("bob", "/ended \(room.state.seq)")
        room.expectPlayback(.paused, item: "https://example.org/a.mp4")
        #expect(room.state.queue.count == 1)
    }

    @Test("/move puts a queued item at a position, by number or id; /dequeue takes one out; both publish the queue")
    func hostsReorder() {
        var room = Scenario.sharing("alice", "bob")
        for name in ["b", "c", "d"] { room.say("alice", "/queue https://example.org/\(name).mp4 \(name.uppercased())") }
        room.say("alice", "/move 3 1")
        #expect(room.state.queue.map(\.title) == ["D", "B", "C"])
        #expect(room.playback.cause == .queue)
        #expect(room.notices.map(\.text).last == "alice moved \"D\" to number 1 in the queue")
        room.say("alice", "/move q1 9")
        #expect(room.state.queue.map(\.title) == ["D", "C", "B"])
        room.say("alice", "/dequeue q2")
        #expect(room.state.queue.map(\.title) == ["D", "B"])
        #expect(room.notices.map(\.text).last == "alice took \"C\" out of the queue")
        room.say("alice", "/dequeue 1")
        #expect(room.state.queue.map(\.title) == ["B"])
        room.say("alice", "/next")
        #expect(room.state.session?.activity.title == "B")
    }

    @Test("/move and /dequeue of an item that is not there say so; from a member who is not a host they are refused")
    func reorderRefusals() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/queue https://example.org/b.mp4 B", "/dequeue 4")
        room.expectRefused("alice", .notPossible)
        #expect(room.error(for: "alice")?.message == "/dequeue: no item 4 (the queue has 1 item(s); /queue lists them)")
        room.say("alice", "/move q9 1")
        room.expectRefused("alice", .notPossible)
        room.say("alice", "/move 1 1")
        #expect(room.told("alice") == ["\"B\" is already number 1 in the queue"])
        room.say("bob", "/dequeue 1")
        room.expectRefused("bob", .forbidden)
        room.say("bob", "/move 1 1")
        room.expectRefused("bob", .forbidden)
        #expect(room.state.queue.map(\.title) == ["B"])
    }
}

@Suite("/subtitles")
struct CommandSubtitlesTests {
    @Test("/subtitles adds tracks to the current activity for everyone, numbered, labelled by default from the file")
    func adds() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/subtitles https://example.org/en.vtt English")
        room.say("alice", "/subtitles https://example.org/fr.vtt")
        let tracks = room.state.session?.activity.subtitles ?? []
        #expect(tracks.map(\.id) == ["s1", "s2"])
        #expect(tracks.map(\.label) == ["English", "fr.vtt"])
        #expect(room.playback.cause == .subtitles)
        #expect(room.events(for: "bob").contains(.state(room.state)))
        #expect(room.notices.last?.text.hasPrefix("alice added subtitles \"fr.vtt\"") == true)
    }

    @Test("a new item starts without subtitles; /subtitles off removes them; a room restored keeps them")
    func lifetime() {
        var room = Scenario.sharing("alice")
        room.say("alice", "/subtitles https://example.org/en.vtt English")
        let restored = Room.restore(room.room.snapshot(at: room.now), members: [], chat: [], downSince: room.now,
                                    maximumDowntime: ServerInterval(milliseconds: 60_000), now: room.now).0
        #expect(restored.state.session?.activity.subtitles.map(\.label) == ["English"])
        room.say("alice", "/subtitles off")
        #expect(room.state.session?.activity.subtitles.isEmpty == true)
        room.say("alice", "/subtitles https://example.org/en.vtt English", "/watch https://example.org/other.mp4")
        #expect(room.state.session?.activity.subtitles.isEmpty == true)
    }

    @Test("/subtitles without a session, beyond the limit, or twice the same file is refused or told")
    func refusals() {
        Scenario.expectRefusedWithoutSession("/subtitles https://example.org/en.vtt")
        var room = Scenario.sharing("alice")
        for number in 1...8 { room.say("alice", "/subtitles https://example.org/\(number).vtt") }
        room.say("alice", "/subtitles https://example.org/9.vtt")
        room.expectRefused("alice", .notPossible)
        #expect(room.state.session?.activity.subtitles.count == 8)
        room.say("alice", "/subtitles https://example.org/1.vtt")
        #expect(room.told("alice") == ["that subtitle track is already there"])
    }
}
