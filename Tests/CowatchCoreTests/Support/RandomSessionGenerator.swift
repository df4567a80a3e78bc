import CowatchCore
import CowatchCoreChecks
import CowatchTime
import SlashCommands

// The steps of random sessions for `RandomizedRoomTests`, drawn from a seeded
// SplitMix64 (`SplitMix64.swift`). The step vocabulary, the host that carries out
// the room's actions and the invariants are in the CowatchCoreChecks module,
// shared with the room fuzzer.

/// Draws the steps of one random session, looking at the driver only to choose
/// sensible speakers (connected slots) and connections (closed slots).
struct RandomSessionGenerator {
    struct Persona {
        var name: String?
        var player: Bool
        var join: Bool
    }

    var rng: SplitMix64
    let setup: RoomSetup
    var slotCount: Int { setup.slots }
    let personas: [Persona]
    let names: [String]

    init(seed: UInt64, byteHeavyNames: Bool) {
        rng = SplitMix64(seed: seed)
        names = Self.names + (byteHeavyNames ? Self.byteHeavyNames : [])
        let slotCount = rng.int(in: 3...8)
        // Sessions check the room's rules, not password hashing: the cheapest
        // scrypt keeps `/password` from dominating their time.
        var configuration = RoomConfiguration(passwordHashing: PasswordHashing(cost: 2, blockSize: 1))
        if rng.chance(0.3) { configuration.maximumMembers = rng.int(in: 2...(slotCount + 2)) }
        if rng.chance(0.3) { configuration.maximumQueueLength = rng.int(in: 1...4) }
        if rng.chance(0.4) { configuration.resumeGrace = ServerInterval(milliseconds: rng.int64(in: 500...8_000)) }
        setup = RoomSetup(slots: slotCount, configuration: configuration)
        var personas: [Persona] = []
        for _ in 0..<slotCount {
            let name: String? = rng.chance(0.08) ? nil : rng.pick(names)
            personas.append(Persona(name: name, player: rng.chance(0.6), join: rng.chance(0.8)))
        }
        self.personas = personas
    }

    mutating func nextStep(_ driver: RoomDriver) -> RoomStep {
        let connected = driver.connectedSlots
        let offline = driver.offlineSlots
        if connected.count < 2, !offline.isEmpty, rng.chance(0.7) {
            return connect(rng.pick(offline), driver)
        }
        switch rng.below(1000) {
        case 0..<760 where !connected.isEmpty:
            let slot = rng.pick(connected)
            // Idle rooms exercise little: share something more often.
            if driver.room.state.playback.status == .idle, rng.chance(0.2) {
                return .message(slot: slot, text: rng.chance(0.8) ? "/watch " + mediaItem() : "/next")
            }
            return .message(slot: slot, text: line(for: slot))
        case 760..<790 where !connected.isEmpty:
            let slot = rng.pick(connected)
            let count = rng.int(in: 2...4)
            return .message(slot: slot, text: (0..<count).map { _ in line(for: slot) }.joined(separator: "\n"))
        case 790..<890:
            return advance()
        case 890..<915 where !connected.isEmpty:
            return .disconnect(slot: rng.pick(connected))
        case 915..<950 where !offline.isEmpty:
            return connect(rng.pick(offline), driver)
        case 950..<955 where !connected.isEmpty:
            return connect(rng.pick(connected), driver, duplicate: true)
        case 955..<980:
            let milliseconds: Int64 = switch rng.below(10) {
            case 0: rng.pick([-50, 0, 5_000, 60_000, Int64.max / 4])
            case 1...5: rng.int64(in: 0...120)
            default: rng.int64(in: 100...2_500)
            }
            return .measure(slot: rng.below(slotCount), milliseconds: milliseconds)
        case 980..<990:
            return .refireRetiredTimer(pick: rng.below(1_000))
        case 990..<995:
            return .ghostLine(text: line(for: 0))
        default:
            return advance()
        }
    }

    private mutating func connect(_ slot: Int, _ driver: RoomDriver, duplicate: Bool = false) -> RoomStep {
        let persona = personas[slot]
        let name = rng.chance(0.8) ? persona.name : (rng.chance(0.1) ? nil : rng.pick(names))
        let player = rng.chance(0.85) ? persona.player : !persona.player
        let resume: RoomStep.Resume
        if duplicate || (driver.slots[slot].token != nil && rng.chance(0.75)) {
            resume = .own
        } else if rng.chance(0.1) {
            resume = .slot(rng.below(slotCount))
        } else {
            resume = rng.chance(0.15) ? .garbage : .none
        }
        return .connect(slot: slot, name: name, player: player, join: persona.join, resume: resume)
    }

    private mutating func advance() -> RoomStep {
        let milliseconds: Int64 = switch rng.below(20) {
        case 0: 0
        case 1...8: rng.int64(in: 1...250)
        case 9...14: rng.int64(in: 250...2_000)
        case 15...18: rng.int64(in: 2_000...8_000)
        default: rng.int64(in: 8_000...75_000)
        }
        let lateness: Int64 = rng.chance(0.3) ? rng.int64(in: 1...400) : 0
        return .advance(milliseconds: milliseconds, lateness: lateness)
    }

    // swiftlint:disable:next cyclomatic_complexity function_body_length
    private mutating func line(for slot: Int) -> String {
        let player = personas[slot].player
        let weights = [
            player ? 16 : 2, // 0 ready
            8, // 1 play
            4, // 2 pause
            6, // 3 seek
            3, // 4 rate
            4, // 5 watch
            3, // 6 queue
            2, // 7 next
            1, // 8 end
            2, // 9 join
            2, // 10 leave
            4, // 11 suspend
            4, // 12 resume
            2, // 13 catchup
            player ? 4 : 1, // 14 buffering
            player ? 3 : 1, // 15 ended
            2, // 16 autoplay
            2, // 17 player
            3, // 18 policy
            3, // 19 op / deop / kick / ban / mute / slow
            1, // 20 nick
            3, // 21 chat and /me
            2, // 22 informational and malformed
        ]
        switch rng.weighted(weights) {
        case 0:
            return "/ready " + rng.pick(["{seq}", "{seq}", "{seq}", "{seq}", "{seq}", "{seq}", "{seq-1}", "{seq-2}",
                                         "{seq-10}", "{seq+1}", "{seq+100}", "0", "1", "999999999999999999",
                                         "9999999999999999999", "-1", "x", ""])
        case 1:
            return rng.pick(["/play", "/play", "/play", "/play now", "/play now", "/PLAY Now", "/play  now ", "/play later"])
        case 2:
            return rng.pick(["/pause", "/pause", "/pause", "/pause now"])
        case 3:
            return "/seek " + rng.pick(["0", "5", "95", "95.5", "1:35", "1:01:35", "999999", "+10", "-10", "+0", "-0",
                                        "+999999", "-999999", "+1:30", "-1:01:35", "0.001", "59:59", "1:60", "abc",
                                        "", "1000000", "+5.5", "-3.25", "12:34:56", "-0.0005", "+277:46:39"])
        case 4:
            return "/rate " + rng.pick(["1", "1.5", "2", "0.25", "4", "4x", "0.5X", "0.24", "4.001", "0", "5", "-1",
                                        "1e2", "nan", "inf", "1.2345678", "3.999", "0.250"])
        case 5:
            return "/watch " + mediaItem()
        case 6:
            return rng.chance(0.3) ? "/queue" : "/queue " + mediaItem()
        case 7:
            return rng.pick(["/next", "/next", "/next", "/next now"])
        case 8:
            return rng.pick(["/end", "/end", "/end please"])
        case 9:
            return rng.pick(["/join", "/join", "/join", "/JOIN", "/join now"])
        case 10:
            return rng.pick(["/leave", "/leave", "/leave", "/leave now"])
        case 11:
            return rng.chance(0.25) ? "/suspend" : "/suspend " + reason()
        case 12:
            switch rng.below(8) {
            case 0, 1: return "/resume"
            case 2, 3: return "/resume " + reason()
            case 4, 5: return "/resume at " + time()
            case 6: return "/resume \(reason()) at \(time())"
            default: return rng.pick(["/resume at", "/resume at abc", "/resume stallRecovery extra", "/resume AT 5", "/resume x at 1 2"])
            }
        case 13:
            return "/catchup" + rng.pick(["", "", " 5", " 10", " 0.5", " 600", " 601", " 0", " -5", " 9999", " 0.001", " 3.25"])
        case 14:
            return rng.pick(["/buffering", "/buffering", "/buffering", "/buffering now"])
        case 15:
            if rng.chance(0.3) {
                // The item's length or live edge, as a player reports it once loaded.
                return "/duration " + rng.pick(["{seq}", "{seq}", "{seq-1}", "{seq+1}", "abc"])
                    + rng.pick([" 60", " 3600.5", " 0.001", " 0", " live 0", " live 7200", " live 1000000000", " live", " soon"])
            }
            return "/ended " + rng.pick(["{seq}", "{seq}", "{seq}", "{seq-1}", "{seq-3}", "{seq+1}", "0", "abc"])
        case 16:
            return "/autoplay " + rng.pick(["on", "on", "off", "yes", "no", "maybe", ""])
        case 17:
            return "/player " + rng.pick(["on", "off", "1", "0", "maybe"])
        case 18:
            return "/policy" + rng.pick(["", " control hosts", " control everyone", " control everyone", " stall wait",
                                         " stall continue", " wait 0", " wait 0.5", " wait 2", " wait 300", " wait 301",
                                         " wait -1", " control hosts stall wait wait 0", " stall wait wait 1",
                                         " wait 0 wait 3", " bogus x", " control", " CONTROL Hosts"])
        case 19:
            let command = rng.pick(["/op", "/op", "/op", "/deop", "/deop", "/kick", "/mute", "/unmute", "/ban",
                                    "/unban", "/bans", "/slow 1", "/slow off", "/lock", "/unlock", "/password pw", "/password off",
                                    "/invite", "/invite 2 1", "/invites", "/revoke 1"])
            if !["/op", "/deop", "/kick", "/mute", "/unmute", "/ban", "/unban"].contains(command) { return command }
            let target = rng.pick(["{name:\(rng.below(slotCount))}", "{name:\(rng.below(slotCount))}",
                                   "{NAME:\(rng.below(slotCount))}", "{name:\(slot)}", "nobody", ""])
            // A short ban lifts itself within a session; a kick's cooldown is the room's.
            let extra = command == "/ban" ? rng.pick(["", " 0.05 spam", " 0.01"]) : command == "/kick" ? rng.pick(["", " reason"]) : ""
            return target.isEmpty ? command : "\(command) \(target)\(extra)"
        case 20:
            return "/nick " + (rng.chance(0.9) ? rng.pick(names) : rng.pick(["", "two words", String(repeating: "n", count: 33)]))
        case 21:
            let text = rng.pick(Self.chat)
            return rng.chance(0.2) ? "/me " + text : text
        default:
            return rng.pick(["/time 1700000000000", "/time -5.5", "/time 12345678901234567", "/time abc", "/who",
                             "/status", "/status", "/help", "/help seek", "/help /play", "/help nope", "/nope", "/",
                             "", "   ", "//", "//play", "/who now", "/queue", "/policy"])
        }
    }

    private mutating func mediaItem() -> String {
        let url = rng.pick(["https://example.org/a.mp4", "https://example.org/a.mp4", "https://example.org/b.mp4",
                            "https://example.org/b.mp4", "http://example.org/c.mp4?x=1#t", "https://EXAMPLE.org/a.mp4",
                            "https://user@example.org/v.mp4", "https://example.org/", "ftp://example.org/x",
                            "https://", "http://:80/x", "notaurl", "https://youtu.be/dQw4w9WgXcQ?t=90",
                            "https://www.youtube.com/watch?v=dQw4w9WgXcQ", "https://www.youtube.com/live/jfKfPfyJRdk",
                            "https://vimeo.com/76979871#t=1m2s", "https://www.youtube.com/@channel"])
        let title = rng.pick(["", "", "", " Episode 1", " Episode 1", " \"quoted\" \\ title", " 🎬 Movie night",
                              " " + String(repeating: "t", count: 201), " line\u{2028}break"])
        return url + title
    }

    private mutating func reason() -> String {
        rng.pick(["stallRecovery", "audioSessionInterrupted", "playingInterstitial", "coordinatedPlaybackNotPossible",
                  "userActionRequired", "userIsChangingCurrentTime", "catchup", "custom.reason-1", "bad!reason"])
    }

    private mutating func time() -> String {
        rng.pick(["0", "30", "95.5", "1:35", "+10", "-10", "-999999", "+999999", "abc"])
    }

    static let names = [
        "alice", "Alice", "bob", "BOB", "carol", "dave", "guest", "guest-2", "émile", "e\u{301}mile", "李雷", "🙂",
        "zoë", String(repeating: "x", count: 32), "a-very-long-name-with-32-chars-x", "o'brien", "\"quoted\"",
        "back\\slash", "名前-2", "has space", "", "\u{202E}evil", String(repeating: "y", count: 33),
        String(repeating: "😀", count: 32),
    ]

    /// Names at the 128-byte limit made of few characters (combining marks), where
    /// a `-2` suffix would push the name past the byte limit.
    static let byteHeavyNames = [
        String(repeating: "a\u{301}\u{301}\u{301}", count: 18) + "ab",
        String(repeating: "o\u{308}\u{308}\u{308}", count: 18) + "cd",
    ]

    static let chat = [
        "hello", "  spaced out  ", "tab\there", "quote \" and backslash \\", "emoji 🎬🍿", "rtl \u{202E}olleh",
        "line\u{2028}separator", "para\u{2029}graph", "//not a command", "<script>alert(1)</script>",
        "{\"type\":\"state\",\"seq\":999}", "carriage return\r", "nul\u{0}byte", "escape \u{1B}[31mred",
        "del\u{7F}", "c1 \u{85} next line", String(repeating: "long ", count: 1_000),
    ]
}
