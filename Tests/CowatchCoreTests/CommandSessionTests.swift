import CowatchCore
import SlashCommands
import Testing

@Suite("/watch")
struct CommandWatchTests {
    @Test("/watch starts a session that joins everyone who connected to join, paused at 0")
    func watchStartsASession() {
        var room = Scenario.alone("alice")
        room.connect("bob", player: true)
        room.connect("carol", join: false)
        room.say("bob", "/watch https://example.org/a.mp4 Episode 1")
        #expect(room.state.seq == 1)
        #expect(room.state.session?.state == .joined)
        #expect(room.state.session?.activity.url?.text == "https://example.org/a.mp4")
        #expect(room.state.session?.activity.identifier == "https://example.org/a.mp4")
        #expect(room.state.session?.activity.title == "Episode 1")
        room.expectPlayback(.paused, position: 0, item: "https://example.org/a.mp4", cause: .watch, by: "bob")
        #expect(room.participant("alice")?.joined == true)
        #expect(room.participant("bob")?.joined == true)
        #expect(room.participant("carol")?.joined == false)
        #expect(room.announced("alice", .joinedSession))
        #expect(room.notices.contains { $0.cause == .watch && $0.text.contains("Episode 1") })
    }

    @Test("/watch without a title takes the last segment of the URL path")
    func watchDefaultTitle() {
        var room = Scenario.alone("alice")
        room.say("alice", "/watch https://example.org/shows/s01e02.mp4?token=x")
        #expect(room.state.session?.activity.title == "s01e02.mp4")
    }

    @Test("/watch joins its sender even when it connected with join=0")
    func watchJoinsTheSender() {
        var room = Scenario()
        room.connect("alice", join: false)
        room.say("alice", "/watch https://example.org/a.mp4")
        #expect(room.participant("alice")?.joined == true)
    }

    @Test("/watch of the item already current, with no title or its own, only tells the sender")
    func watchSameItem() {
        var room = Scenario.sharing("alice", "bob")
        let before = room.state
        room.say("bob", "/watch https://example.org/a.mp4")
        #expect(room.told("bob") == ["already watching \"Episode 1\" (https://example.org/a.mp4)"])
        #expect(room.published.isEmpty)
        room.expectOnlyTold("bob", after: "/watch https://example.org/a.mp4 Episode 1")
        #expect(room.published.isEmpty)
        #expect(room.state == before)
    }

    @Test("/watch from a member outside the active session is refused with no-session")
    func watchOutsideTheSession() {
        var room = Scenario.sharing("alice", "bob")
        room.expectRefusedOutsideTheSession("bob", "/watch https://example.org/b.mp4")
        #expect(room.playback.item == "https://example.org/a.mp4")
    }

    @Test("/watch from a non-host under control hosts is refused with forbidden")
    func watchForbidden() {
        var room = Scenario.alone("alice")
        room.connect("bob")
        room.expectForbiddenUnderControlHosts("bob", "/watch https://example.org/a.mp4")
        #expect(room.state.session == nil)
        room.say("alice", "/watch https://example.org/a.mp4")
        #expect(room.state.session?.state == .joined)
    }

    @Test("/watch with a URL that is not http or https is refused with bad arguments and the usage")
    func watchBadURL() {
        var room = Scenario.alone("alice")
        room.expectBadArguments("/watch", "/watch ftp://example.org/a.mp4", "/watch https://",
                                usage: "usage: /watch <url> [title...]")
        #expect(room.state.session == nil)
    }
}

@Suite("/join and /leave")
struct CommandJoinLeaveTests {
    @Test("/join without a session is refused with no-session")
    func joinWithoutSession() {
        Scenario.expectRefusedWithoutSession("/join")
    }

    @Test("/join when already in the session only tells the sender")
    func joinTwice() {
        var room = Scenario.sharing("alice")
        room.expectOnlyTold("alice", after: "/join")
        #expect(room.participantChanges.isEmpty)
    }

    @Test("/join puts a member who connected with join=0 in the session")
    func joinAfterJoinZero() {
        var room = Scenario.sharing("alice")
        room.connect("bob", player: true, join: false)
        room.say("bob", "/join")
        #expect(room.participant("bob")?.joined == true)
        room.say("alice", "/play")
        #expect(room.playback.status == .waiting)
    }

    @Test("/leave takes the member out of the session and clears its suspensions")
    func leaveClearsSuspensions() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.say("bob", "/suspend", "/leave")
        #expect(room.participant("bob")?.joined == false)
        #expect(room.participant("bob")?.suspensions == [])
        #expect(room.participant("bob")?.ready == false)
    }

    @Test("/leave cancels the member's catch-up")
    func leaveCancelsCatchup() {
        var room = Scenario.sharing("alice", "bob")
        room.playTogether(by: "alice")
        room.watchFor(seconds: 30)
        room.say("bob", "/catchup", "/leave")
        #expect(room.armedCatchupEnds.isEmpty)
    }

    @Test("/leave outside a session is refused with no-session")
    func leaveWithoutSession() {
        Scenario.expectRefusedWithoutSession("/leave")
        var joined = Scenario.sharing("alice", "bob")
        joined.expectRefusedOutsideTheSession("bob", "/leave")
    }

    @Test("/leave and /join take no arguments")
    func leaveJoinBadArguments() {
        var room = Scenario.sharing("alice")
        room.expectBadArguments("/leave now", usage: "usage: /leave")
        room.say("alice", "/join please")
        room.expectRefused("alice", .badArguments)
    }
}

@Suite("/end")
struct CommandEndTests {
    @Test("/end from a non-host under control hosts is refused with forbidden")
    func endForbidden() {
        var room = Scenario.sharing("alice", "bob")
        room.expectForbiddenUnderControlHosts("bob", "/end")
        #expect(room.state.session?.state == .joined)
    }

    @Test("/end without a session, or from a member outside it, is refused with no-session")
    func endNoSession() {
        Scenario.expectRefusedWithoutSession("/end")
        var shared = Scenario.sharing("alice", "bob")
        shared.expectRefusedOutsideTheSession("bob", "/end")
        shared.say("alice", "/end", "/end")
        shared.expectRefused("alice", .noSession)
    }

    @Test("/end tells everyone who ended the session")
    func endNotifies() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/end")
        #expect(room.notices.contains { $0.cause == .end && $0.by == room.id("bob") })
    }

    @Test("transport commands after /end are refused with no-session")
    func transportAfterEnd() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/end")
        for text in ["/play", "/pause", "/seek 10", "/rate 2", "/suspend", "/catchup"] {
            room.say("bob", text)
            room.expectRefused("bob", .noSession)
        }
    }
}
