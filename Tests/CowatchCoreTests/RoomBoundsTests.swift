import CowatchCore
import CowatchTime
import SlashCommands
import Testing

/// What one stranger can make a room keep or send is bounded.
@Suite("Room bounds")
struct RoomBoundsTests {
    @Test("a room keeps at most chat-history-bytes of chat for newcomers, the newest lines")
    func chatBytesPerRoom() {
        var room = Scenario.alone("alice") { $0.chatHistoryBytes = 100 }
        for index in 0..<10 { room.say("alice", "line \(index) " + String(repeating: "x", count: 30)) }
        #expect(room.room.recentChatBytes <= 100)
        #expect(room.room.recentChatBytes == room.room.recentChat.reduce(0) { $0 + $1.text.utf8.count })
        #expect(room.room.recentChat.last?.text.hasPrefix("line 9") == true)
        #expect(room.room.recentChat.count == 2)
    }

    @Test("forgetting chat down to a budget keeps the newest lines and says how much went")
    func forgetChat() {
        var room = Scenario.alone("alice")
        for index in 0..<4 { room.say("alice", "line \(index)") }
        var copy = room.room
        #expect(copy.forgetChat(keepingBytes: 12) == 12)
        #expect(copy.recentChat.map(\.text) == ["line 2", "line 3"])
        #expect(copy.forgetChat(keepingBytes: 0) == 6)
        #expect(copy.recentChat.map(\.text) == ["line 3"])
    }

    @Test("a restored room keeps its chat within the byte budget")
    func restoredChatIsBounded() {
        var configuration = RoomConfiguration()
        configuration.chatHistoryBytes = 15
        var room = Scenario.alone("alice")
        for index in 0..<5 { room.say("alice", "line \(index)") }
        let (back, _) = Room.restore(room.room.snapshot(at: room.now), members: [], chat: room.room.recentChat,
                                     configuration: configuration, downSince: room.now,
                                     maximumDowntime: ServerInterval(milliseconds: 1000), now: room.now)
        #expect(back.recentChat.map(\.text) == ["line 3", "line 4"])
        #expect(back.recentChatBytes == 12)
    }

    @Test("the queue's links and titles are bounded: past max-state-bytes /queue is refused, so a /seek sends a bounded state")
    func stateIsBounded() {
        var room = Scenario.alone("alice") { $0.maximumStateBytes = 1024 }
        let long = "https://example.org/" + String(repeating: "a", count: 300) + ".mp4"
        for _ in 0..<3 { room.say("alice", "/queue \(long) T") }
        #expect(room.state.queue.count == 3)
        room.say("alice", "/queue \(long) T")
        room.expectRefused("alice", .queueFull)
        #expect(room.state.queue.count == 3)
        room.say("alice", "/queue https://example.org/short.mp4 S")
        #expect(room.state.queue.count == 4)
    }

    @Test("subtitle tracks count toward the same bound")
    func subtitlesAreBounded() {
        var room = Scenario.alone("alice") { $0.maximumStateBytes = 1024 }
        room.say("alice", "/watch https://example.org/a.mp4 A")
        let long = "https://example.org/" + String(repeating: "s", count: 400)
        room.say("alice", "/subtitles \(long)1.vtt one")
        room.say("alice", "/subtitles \(long)2.vtt two")
        room.say("alice", "/subtitles \(long)3.vtt three")
        room.expectRefused("alice", .notPossible)
        #expect(room.state.session?.activity.subtitles.count == 2)
    }

    @Test("an empty room nobody used is kept for unused-room-expiry; a used one for room-expiry")
    func unusedRoomsExpireSooner() {
        var configuration = RoomConfiguration()
        configuration.unusedRoomExpiry = ServerInterval(milliseconds: 3_600_000)
        var unused = Scenario(configuration: configuration)
        unused.connect("alice")
        #expect(!unused.room.hasBeenUsed)
        unused.leave("alice")
        #expect(unused.scheduled.contains { $0.0 == .roomExpires(emptySince: unused.now)
            && $0.1 == unused.now.advanced(by: ServerInterval(milliseconds: 3_600_000)) })

        var used = Scenario(configuration: configuration)
        used.connect("alice")
        used.say("alice", "hello")
        #expect(used.room.hasBeenUsed)
        used.leave("alice")
        #expect(used.scheduled.contains { $0.1 == used.now.advanced(by: configuration.roomExpiry) })
    }
}
