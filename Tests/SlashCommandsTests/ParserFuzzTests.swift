import SlashCommands
import Testing

/// Lines glued together from hostile pieces, with a fixed seed so a failure
/// repeats. Whatever the parser accepts must hold only values the core can trust.
@Suite("Line parser under hostile input")
struct ParserFuzzTests {
    static let pieces: [String] = [
        "/", "//", " ", "\t", "seek", "rate", "resume", "at", "time", "policy", "wait", "catchup", "nick",
        "watch", "queue", "ready", "me", "help", ":", ".", "+", "-", "x", "0", "9", "59", "60", "999999",
        "99999999999999999999", "1e5", "nan", "inf", "0x1f", "１２", "٩", "é", "e\u{0301}", "\u{0301}",
        "\u{200D}", "\u{202E}", "\u{00A0}", "\u{1B}", "\u{0}", "\u{85}", "\r", "🎬", "https://", "http://",
        "example.org", "@", "?", "#", "\"", "\\", "control", "hosts", "stall", "continue", "on", "off",
    ]

    /// A small linear congruential generator: deterministic on every platform.
    struct Generator {
        var state: UInt64
        mutating func next(below bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
    }

    static func lines(count: Int, seed: UInt64) -> [String] {
        var generator = Generator(state: seed)
        return (0..<count).map { _ in
            let length = 1 + generator.next(below: 12)
            var line = generator.next(below: 3) == 0 ? "" : "/"
            for _ in 0..<length { line += pieces[generator.next(below: pieces.count)] }
            return line
        }
    }

    @Test("accepted commands carry only finite, bounded, valid values", arguments: [1, 2, 3, 4])
    func acceptedValuesAreSafe(seed: UInt64) {
        let parser = LineParser()
        var accepted = 0
        for line in Self.lines(count: 5_000, seed: seed) {
            switch parser.parse(line) {
            case .success(.command(let command)):
                accepted += 1
                Self.expectSafe(command, line: line)
            case .success(.chat(let text)):
                #expect(!text.unicodeScalars.contains { $0.value < 0x20 && $0 != "\t" }, "\(line.debugDescription)")
            case .success(.empty):
                break
            case .failure(let error):
                #expect(error.message.utf8.count <= 400, "\(line.debugDescription)")
            }
        }
        #expect(accepted > 0)
    }

    static func expectSafe(_ command: SlashCommand, line: String) {
        let context = Comment(rawValue: line.debugDescription)
        switch command {
        case .seek(let time): expectSafe(time, context)
        case .resume(_, let time?): expectSafe(time, context)
        case .rate(let rate):
            #expect(rate.value.isFinite && rate.value >= 0.25 && rate.value <= 4, context)
        case .catchup(let seconds):
            #expect(seconds.isFinite && seconds > 0 && seconds <= 600, context)
        case .time(let client):
            #expect(client.isFinite, context)
        case .policy(let change):
            if let wait = change.wait { #expect(wait >= .zero && wait <= .seconds(300), context) }
        case .nick(let name):
            #expect(DisplayName.validationProblem(name.text) == nil, context)
        case .watch(let url, _), .queue(let url?, _):
            #expect(MediaURL.validationProblem(url.text) == nil, context)
        case .ready(let seq, let lead):
            #expect(seq >= 0 && lead >= 0 && lead <= CommandTable.maximumReadyLead, context)
        case .ended(let seq):
            #expect(seq >= 0, context)
        default:
            break
        }
    }

    static func expectSafe(_ time: TimeArgument, _ context: Comment) {
        switch time {
        case .absolute(let media):
            #expect(media.seconds.isFinite && media.seconds >= 0 && media.seconds <= 999_999, context)
        case .relative(let delta):
            #expect(delta.isFinite && delta.magnitude <= 999_999, context)
        }
    }

    /// Refusals quoted 40 characters of the offending word, and a character can
    /// carry any number of combining marks, so the message echoed nearly the whole
    /// 4 KiB line (found while adding the fuzz target's message-length property).
    /// They now quote at most 40 Unicode scalars.
    @Test("a refusal quotes a short excerpt of a word made of heavy characters")
    func refusalsQuoteBoundedExcerpts() {
        let parser = LineParser()
        let heavy = repeated("a" + repeated("\u{0301}", 50), 40)
        for line in [
            "/" + heavy, "/seek " + heavy, "/policy " + heavy + " x", "/policy " + heavy, "/help " + heavy,
            "/resume at 1 " + heavy, "/resume userActionRequired " + heavy, "/play " + heavy,
        ] {
            guard case .failure(let error) = parser.parse(line) else {
                Issue.record("accepted \(ParserCase.printable(line))")
                continue
            }
            #expect(error.message.utf8.count <= 400, "\(error.code.rawValue): \(error.message.utf8.count) bytes")
        }
    }

    @Test("a line of many thousand combining marks or digits is refused, not parsed slowly or trapped")
    func hugeLines() {
        let parser = LineParser()
        for line in [
            "/nick a" + repeated("\u{0301}", 50_000), "/seek " + repeated("9", 1_000_000),
            "/" + repeated("/", 100_000), repeated("🎬", 100_000), "/me " + repeated("\u{202E}", 20_000),
        ] {
            guard case .failure(let error) = parser.parse(line) else {
                Issue.record("accepted a line of \(line.utf8.count) bytes")
                continue
            }
            #expect(error.code == .tooLong)
        }
    }
}
