import CowatchCore
import CowatchCoreChecks
import CowatchTime
import FuzzSupport
import SlashCommands

/// Turns fuzzer bytes into a room setup and steps. The first bytes choose the
/// limits; then each step is an opcode byte and its operands. Lines are built from
/// a command word and argument pieces (placeholders such as `{seq}` resolve to the
/// room's current values, so `/ready {seq}` is right as often as wrong), or taken
/// as raw bytes, so both deep command sequences and hostile text are reached.
struct RoomStepDecoder {
    /// Bounds the work of one input, so one run stays short.
    static let maximumSteps = 120

    private var input: FuzzInput
    private var slots = 2
    private var decoded = 0

    init(_ bytes: UnsafeRawBufferPointer) {
        input = FuzzInput(bytes)
    }

    mutating func setup() -> RoomSetup {
        slots = 2 + input.below(7)
        // Sessions check the room's rules, not password hashing: the cheapest
        // scrypt keeps `/password` from taking the fuzzer's time.
        var configuration = RoomConfiguration(passwordHashing: PasswordHashing(cost: 2, blockSize: 1))
        let flags = input.byte()
        if flags & 1 != 0 { configuration.maximumMembers = 1 + input.below(slots + 1) }
        if flags & 2 != 0 { configuration.maximumQueueLength = 1 + input.below(4) }
        if flags & 4 != 0 { configuration.resumeGrace = ServerInterval(milliseconds: Int64(input.uint16() % 10_000)) }
        if flags & 8 != 0 { configuration.chatHistory = input.below(4) }
        return RoomSetup(slots: slots, configuration: configuration)
    }

    mutating func nextStep() -> RoomStep? {
        guard !input.isAtEnd, decoded < Self.maximumSteps else { return nil }
        decoded += 1
        switch input.below(16) {
        case 0, 1:
            let name: String? = input.below(8) == 0 ? nil : names()
            let flags = input.byte()
            let resume: RoomStep.Resume = switch flags >> 2 & 3 {
            case 0: .none
            case 1: .own
            case 2: .garbage
            default: .slot(input.below(slots))
            }
            return .connect(slot: input.below(slots), name: name, player: flags & 1 != 0, join: flags & 2 == 0, resume: resume)
        case 2, 3, 4, 5, 6, 7:
            return .message(slot: input.below(slots), text: line())
        case 8:
            let count = 2 + input.below(3)
            return .message(slot: input.below(slots), text: (0..<count).map { _ in line() }.joined(separator: "\n"))
        case 9, 10:
            let scale: Int64 = [1, 1, 8, 64][input.below(4)]
            let lateness = input.below(4) == 0 ? Int64(input.byte()) * 2 : 0
            return .advance(milliseconds: Int64(input.uint16()) * scale, lateness: lateness)
        case 11:
            return .disconnect(slot: input.below(slots))
        case 12:
            let slot = input.below(slots)
            let milliseconds: Int64 = input.below(4) == 0
                ? input.pick([-50, 0, 60_000, Int64.max / 4, Int64.min / 4])
                : Int64(input.uint16() % 3_000)
            return .measure(slot: slot, milliseconds: milliseconds)
        case 13:
            return .refireRetiredTimer(pick: Int(input.byte()))
        case 14:
            return .ghostLine(text: line())
        default:
            return .message(slot: input.below(slots), text: raw())
        }
    }

    /// A command word (or none: chat) and up to three argument pieces.
    private mutating func line() -> String {
        var text = input.pick(Self.commandWords)
        for _ in 0..<input.below(4) {
            let piece = input.below(Self.pieces.count + 1)
            text += " " + (piece < Self.pieces.count ? Self.pieces[piece] : raw())
        }
        return text
    }

    /// Up to 31 bytes as the gateway decodes them: invalid UTF-8 becomes U+FFFD.
    private mutating func raw() -> String {
        String(decoding: input.bytes(input.below(32)), as: UTF8.self)
    }

    private mutating func names() -> String {
        let pick = input.below(Self.names.count + 1)
        return pick < Self.names.count ? Self.names[pick] : raw()
    }

    static let commandWords: [String] = CommandName.allCases.map { "/" + $0.rawValue }
        + ["/ready", "/ready", "/play", "/seek", "/PLAY", "", "", "//", "/", "/nope"]

    static let pieces: [String] = [
        "{seq}", "{seq}", "{seq}", "{seq-1}", "{seq+1}", "{seq-2}",
        "{name:0}", "{name:1}", "{name:2}", "{name:3}", "{NAME:1}", "{name:7}",
        "now", "on", "off", "at", "AT", "0", "1", "5", "10", "95.5", "1:35", "59:59", "+10", "-10", "+0", "-999999",
        "999999", "0.25", "4", "2x", "0.001", "600", "601", "300", "nan",
        "control", "hosts", "everyone", "stall", "wait", "continue",
        "stallRecovery", "catchup", "userActionRequired", "custom.reason-1",
        "https://example.org/a.mp4", "https://example.org/a.mp4", "https://example.org/b.mp4",
        "http://example.org/c.mp4?x=1#t", "https://EXAMPLE.org/a.mp4", "ftp://x", "https://",
        "Episode 1", "🎬", "é", "e\u{301}", "\u{301}", "\u{202E}", "\u{2028}", "\u{0}", "\u{1B}[31m", "\r", "\t",
    ]

    static let names: [String] = [
        "alice", "Alice", "bob", "BOB", "carol", "guest", "guest-2", "émile", "e\u{301}mile", "李雷", "🙂",
        String(repeating: "x", count: 32), String(repeating: "y", count: 33), "has space", "", "\u{202E}evil",
        String(repeating: "😀", count: 32), String(repeating: "a\u{301}\u{301}\u{301}", count: 18) + "ab",
    ]
}
