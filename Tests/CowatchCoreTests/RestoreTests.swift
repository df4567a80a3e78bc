import CowatchCore
import CowatchTime
import SlashCommands
import Testing

/// A room brought back after a restart (the store's half is in CowatchStoreTests).
@Suite("Restoring a room after a restart")
struct RestoreTests {
    /// A room where alice (host) and bob watch, playing at 1.5x from 0:30,
    /// with a queue, a chat line and bob suspended; and what it persisted.
    static func playingRoom() -> (Scenario, RoomSnapshot, [MemberRecord], [ChatLine]) {
        var room = Scenario()
        room.connect("alice", player: true)
        room.connect("bob", player: true)
        room.say("alice", "/watch https://example.org/a.mp4 Episode 1", "/queue https://example.org/b.mp4 Episode 2",
                 "/seek 30", "/rate 1.5", "/play now")
        room.say("bob", "/suspend audioSessionInterrupted", "popcorn?")
        let records = room.room.members.values.map(\.record)
        return (room, room.room.snapshot(at: room.now), records, room.room.recentChat)
    }

    static func restore(_ snapshot: RoomSnapshot, _ members: [MemberRecord], _ chat: [ChatLine],
                        downFor milliseconds: Int64, limit: Int64 = 600_000) -> (Room, [RoomAction], ServerInstant) {
        let now = snapshot.savedAt.advanced(by: ServerInterval(milliseconds: milliseconds))
        let (room, actions) = Room.restore(snapshot, members: members, chat: chat, downSince: snapshot.savedAt,
                                           maximumDowntime: ServerInterval(milliseconds: limit), now: now)
        return (room, actions, now)
    }

    @Test("a playing room continues from its anchor as if the server had never stopped")
    func playingContinues() {
        let (before, snapshot, members, chat) = Self.playingRoom()
        let (room, _, now) = Self.restore(snapshot, members, chat, downFor: 20_000)
        #expect(room.state == before.state)
        #expect(room.state.playback.status == .playing)
        let expected = before.state.playback.position(at: now).seconds
        #expect(abs(room.state.playback.position(at: now).seconds - expected) < 0.001)
    }

    @Test("after a downtime longer than the limit, a playing room comes back paused where it has got to")
    func longDowntimePauses() {
        let (before, snapshot, members, chat) = Self.playingRoom()
        let (room, actions, now) = Self.restore(snapshot, members, chat, downFor: 700_000)
        #expect(room.state.playback.status == .paused)
        #expect(room.state.playback.cause == .restore)
        #expect(abs(room.state.playback.position.seconds - before.state.playback.position(at: now).seconds) < 0.001)
        #expect(room.state.seq == before.state.seq + 1)
        #expect(actions.contains { if case .persist = $0 { true } else { false } })
    }

    @Test("members come back disconnected, keeping name, role and suspensions, within a fresh resume grace")
    func membersComeBack() {
        let (_, snapshot, members, chat) = Self.playingRoom()
        let (room, actions, now) = Self.restore(snapshot, members, chat, downFor: 1_000)
        let alice = room.members.values.first { $0.name.text == "alice" }
        let bob = room.members.values.first { $0.name.text == "bob" }
        #expect(alice?.role == .host)
        #expect(alice?.connected == false)
        #expect(bob?.suspensions == [.audioSessionInterrupted])
        #expect(room.recentChat.map(\.text) == ["popcorn?"])
        let graces = actions.compactMap { action -> ServerInstant? in
            if case .schedule(.resumeExpires, let at) = action { at } else { nil }
        }
        #expect(graces == [now.advanced(by: ServerInterval(milliseconds: 60_000)), now.advanced(by: ServerInterval(milliseconds: 60_000))])
    }

    @Test("a member reconnecting with its resume token keeps its identity, and seq keeps increasing")
    func resumeAfterRestore() {
        let (before, snapshot, members, chat) = Self.playingRoom()
        var (room, _, now) = Self.restore(snapshot, members, chat, downFor: 1_000)
        let token = members.first { $0.name.text == "alice" }?.resumeToken
        let outcome = room.connectionOpened(ConnectRequest(name: "someone", resume: token, newToken: "fresh"), now: now)
        guard case .accepted(let id, let actions) = outcome else {
            Issue.record("refused")
            return
        }
        #expect(id == before.id("alice"))
        guard case .welcome(let welcome)? = actions.firstEvent(to: id) else {
            Issue.record("no welcome")
            return
        }
        #expect(welcome.you.role == .host)
        #expect(welcome.chat.map(\.text) == ["popcorn?"])
        let paused = room.receive(.pause, from: id, now: now)
        let states = paused.compactMap { if case .broadcast(.state(let state), _) = $0 { state } else { nil } }
        #expect(states.first?.seq == before.state.seq + 1)
    }

    @Test("a new member after a restore gets a fresh id, not one of the restored ones")
    func idsStayUnique() {
        let (_, snapshot, members, chat) = Self.playingRoom()
        var (room, _, now) = Self.restore(snapshot, members, chat, downFor: 1_000)
        guard case .accepted(let id, _) = room.connectionOpened(ConnectRequest(name: "carol", newToken: "t"), now: now) else {
            Issue.record("refused")
            return
        }
        #expect(!members.map(\.id).contains(id))
    }

    @Test("a waiting room comes back paused: none of its players is connected yet")
    func waitingPauses() {
        var room = Scenario()
        room.connect("alice", player: true)
        room.say("alice", "/watch https://example.org/a.mp4", "/play")
        #expect(room.playback.status == .waiting)
        let (restored, _, _) = Self.restore(room.room.snapshot(at: room.now), room.room.members.values.map(\.record),
                                            [], downFor: 1_000)
        #expect(restored.state.playback.status == .paused)
    }
}
