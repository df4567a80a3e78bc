import CowatchCore
import CowatchTime
import SlashCommands
import Testing

/// The room decides who speaks (docs/voice.md): seats, mutes, modes, and what
/// the media server's link is told and tells back.
@Suite("Voice: the room's seats")
struct RoomVoiceTests {
    static var withVoice: RoomConfiguration {
        var configuration = RoomConfiguration()
        configuration.voice = VoiceLimits(available: true, seats: 3, speakers: 2)
        return configuration
    }

    static func room(_ names: String...) -> Scenario {
        var room = Scenario(configuration: withVoice)
        for name in names { room.connect(name) }
        return room
    }

    /// Takes a seat the whole way: ticket, offer, the media server's answer.
    static func seat(_ name: String, in room: inout Scenario) {
        room.say(name, "/voice join")
        #expect(room.voiceOrders == [.ticket(room.id(name))])
        room.say(name, "/voice offer dj0w")
        guard case .join(let id, _, let offer, _)? = room.voiceOrders.first else {
            Issue.record("no join order for \(name)")
            return
        }
        #expect(offer == "dj0w")
        room.voiceReport { room, now in room.voiceJoined(id, answer: "v=0 answer", now: now) }
    }

    func roster(_ room: Scenario, for name: String) -> VoiceRoster? {
        room.events(for: name).compactMap { if case .voice(let roster) = $0 { roster } else { nil } }.last
    }

    @Test("a newcomer on a server with voice is told who is in it, after the state; without voice, nothing")
    func greeting() {
        var room = Self.room("alice")
        #expect(room.events(for: "alice").last == .voice(VoiceRoster(change: .list, member: nil, name: nil, mode: .on, seats: [])))
        var plain = Scenario()
        plain.connect("alice")
        #expect(!plain.events(for: "alice").contains { if case .voice = $0 { true } else { false } })
        plain.say("alice", "/voice join")
        plain.expectRefused("alice", .voiceUnavailable, command: .voice, saying: "no media server")
        room.say("alice", "/voice")
        #expect(roster(room, for: "alice")?.change == .list)
    }

    @Test("a seat: ticket, offer, answer to the member, the room told; the media server's answer goes to that member alone")
    func takingASeat() {
        var room = Self.room("alice", "bob")
        Self.seat("alice", in: &room)
        #expect(room.events(for: "alice").contains(.voiceAnswer(sdp: "v=0 answer")))
        #expect(!room.events(for: "bob").contains(.voiceAnswer(sdp: "v=0 answer")))
        let told = roster(room, for: "bob")
        #expect(told?.change == .joined)
        #expect(told?.seats.map(\.id) == [room.id("alice")])
        #expect(told?.seats.first?.name.text == "alice")
    }

    @Test("an offer in parts is put together before the media server sees it; one too long is refused")
    func offerInParts() {
        var room = Self.room("alice")
        room.say("alice", "/voice offer part dj0w", "/voice offer part DQpv", "/voice offer PS0=")
        #expect(room.voiceOrders == [.join(room.id("alice"), name: DisplayName("alice")!, offer: "dj0wDQpvPS0=", muted: false)])
        // Parts within a line each, more than an offer may be in all.
        let part = String(repeating: "A", count: 4000)
        for _ in 0..<5 { room.say("alice", "/voice offer part \(part)") }
        room.expectRefused("alice", .badArguments, command: .voice, saying: "at most")
        room.say("alice", "/voice offer QQ==")
        #expect(room.voiceOrders.contains { if case .join(_, _, "QQ==", _) = $0 { true } else { false } })
    }

    @Test("a kick, a ban, a leave and a lost connection each give up the seat at the media server")
    func departuresLeaveVoice() {
        for departure in ["kick", "ban", "leave", "disconnect"] {
            var room = Self.room("alice", "bob")
            Self.seat("bob", in: &room)
            switch departure {
            case "kick": room.say("alice", "/kick bob")
            case "ban": room.say("alice", "/ban bob")
            case "leave": room.leave("bob")
            default: room.disconnect("bob")
            }
            #expect(room.voiceOrders == [.leave(room.id("bob"))], "\(departure)")
            #expect(roster(room, for: "alice")?.seats.isEmpty == true, "\(departure)")
            #expect(roster(room, for: "alice")?.change == .left, "\(departure)")
        }
    }

    @Test("a host's /mute mutes the member in voice at once, and /unmute gives back its own choice")
    func hostMute() {
        var room = Self.room("alice", "bob")
        Self.seat("bob", in: &room)
        room.say("alice", "/mute bob")
        #expect(room.voiceOrders == [.mute(room.id("bob"), true)])
        #expect(roster(room, for: "alice")?.seats.first?.muted == true)
        // A muted member may still leave, list and mute itself, not unmute.
        room.say("bob", "/voice unmute")
        room.expectRefused("bob", .muted)
        room.say("alice", "/unmute bob")
        #expect(room.voiceOrders == [.mute(room.id("bob"), false)])
        room.say("bob", "/voice mute")
        #expect(room.voiceOrders == [.mute(room.id("bob"), true)])
        room.say("alice", "/mute bob")
        room.say("alice", "/unmute bob")
        #expect(room.voiceOrders == [.mute(room.id("bob"), true)], "its own mute stands")
    }

    @Test("voice off takes every seat back; hosts only keeps the hosts'; bots never take one")
    func modes() {
        var room = Self.room("alice", "bob")
        Self.seat("alice", in: &room)
        Self.seat("bob", in: &room)
        room.say("bob", "/voice off")
        room.expectRefused("bob", .forbidden)
        room.say("alice", "/voice hosts")
        #expect(room.voiceOrders == [.leave(room.id("bob"))])
        #expect(roster(room, for: "alice")?.mode == .hosts)
        #expect(room.notices.contains { $0.cause == .voice })
        room.say("bob", "/voice join")
        room.expectRefused("bob", .forbidden, saying: "only hosts")
        room.say("alice", "/voice off")
        #expect(room.voiceOrders == [.leave(room.id("alice"))])
        room.say("alice", "/voice on")
        room.say("alice", "/token dj chat")
        guard case .token(_, let token)? = room.reply(for: "alice") else { Issue.record("no token"); return }
        #expect(room.connect("dj", token: token) != nil)
        room.say("dj", "/voice join")
        room.expectRefused("dj", .forbidden)
        #expect(room.voiceOrders.isEmpty)
    }

    @Test("the mode is kept across a restart")
    func modeIsKept() {
        var room = Self.room("alice")
        room.say("alice", "/voice hosts")
        #expect(room.room.snapshot(at: room.now).protection?.voiceMode == .hosts)
    }

    @Test("seats and speakers are bounded: a newcomer past the speakers joins muted, past the seats is refused")
    func limits() {
        var room = Self.room("alice", "bob", "carol", "dave")
        Self.seat("alice", in: &room)
        Self.seat("bob", in: &room)
        room.say("carol", "/voice offer dj0w")
        #expect(room.voiceOrders == [.join(room.id("carol"), name: DisplayName("carol")!, offer: "dj0w", muted: true)])
        #expect(room.told("carol").contains { $0.contains("joined voice muted") })
        room.say("carol", "/voice unmute")
        room.expectRefused("carol", .voiceUnavailable, saying: "at once")
        room.say("dave", "/voice offer dj0w")
        room.expectRefused("dave", .voiceUnavailable, saying: "seats")
    }

    @Test("what the media server reports: a failure tells the member why, speaking is told once, the link's end ends every seat")
    func reports() {
        var room = Self.room("alice", "bob")
        Self.seat("alice", in: &room)
        room.voiceReport { room, now in room.voiceSpeaking(MemberID("m1"), true, now: now) }
        #expect(roster(room, for: "bob")?.change == .speaking)
        #expect(roster(room, for: "bob")?.seats.first?.speaking == true)
        room.voiceReport { room, now in room.voiceSpeaking(MemberID("m1"), true, now: now) }
        #expect(room.events(for: "bob").isEmpty)
        room.voiceReport { room, now in room.voiceEnded(reason: "gone", now: now) }
        room.expectRefused("alice", .voiceUnavailable, saying: "gone")
        #expect(room.voiceOrders.isEmpty, "the link that went away is not asked anything")
        Self.seat("bob", in: &room)
        room.voiceReport { room, now in room.voiceFailed(MemberID("m2"), reason: "the call ended", now: now) }
        room.expectRefused("bob", .voiceUnavailable, saying: "the call ended")
        #expect(room.voiceOrders == [.leave(room.id("bob"))])
        // An answer for a seat given up meanwhile lets Janus's side go.
        room.say("alice", "/voice offer dj0w", "/voice leave")
        room.voiceReport { room, now in room.voiceJoined(MemberID("m1"), answer: "late", now: now) }
        #expect(room.voiceOrders == [.leave(room.id("alice"))])
        #expect(room.events(for: "alice").isEmpty)
    }
}
