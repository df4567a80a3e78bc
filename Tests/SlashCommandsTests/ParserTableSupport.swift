import SlashCommands
import Testing

/// One row of the parser table: an input line and what `LineParser` must make of it.
struct ParserCase: Sendable, CustomTestStringConvertible {
    enum Outcome: Sendable {
        case line(InputLine)
        /// The error code and the command the error names (nil for chat or unknown).
        case refusal(ErrorCode, CommandName?)
    }

    let line: String
    let outcome: Outcome

    /// The line with invisible characters spelled out, shortened when long, so a
    /// failing row can be found in the table.
    var testDescription: String { Self.printable(line) }

    static func printable(_ text: String) -> String {
        var shown = ""
        for scalar in text.unicodeScalars.prefix(60) {
            let value = scalar.value
            let plain = value >= 0x20 && value < 0x7F
            shown += plain ? String(scalar) : "\\u{\(String(value, radix: 16, uppercase: true))}"
        }
        let bytes = text.utf8.count
        return bytes > 60 ? "\"\(shown)…\" (\(bytes) bytes)" : "\"\(shown)\""
    }
}

/// Builders that keep each table row on one line.
enum Row {
    static func command(_ line: String, _ command: SlashCommand) -> ParserCase {
        ParserCase(line: line, outcome: .line(.command(command)))
    }

    static func chat(_ line: String, _ text: String) -> ParserCase {
        ParserCase(line: line, outcome: .line(.chat(text)))
    }

    static func empty(_ line: String) -> ParserCase {
        ParserCase(line: line, outcome: .line(.empty))
    }

    /// `bad-arguments` naming `command`.
    static func bad(_ line: String, _ command: CommandName) -> ParserCase {
        ParserCase(line: line, outcome: .refusal(.badArguments, command))
    }

    /// Each of `lines` refused with `bad-arguments` naming `command`.
    static func bad(_ command: CommandName, _ lines: String...) -> [ParserCase] {
        lines.map { bad($0, command) }
    }

    static func refused(_ line: String, _ code: ErrorCode, _ command: CommandName?) -> ParserCase {
        ParserCase(line: line, outcome: .refusal(code, command))
    }

    static func unknown(_ line: String) -> ParserCase {
        ParserCase(line: line, outcome: .refusal(.unknownCommand, nil))
    }
}

// MARK: - Typed values for expected commands

func url(_ text: String) -> MediaURL {
    guard let url = MediaURL(text) else { fatalError("test URL \(text) is not valid") }
    return url
}

func name(_ text: String) -> DisplayName {
    guard let name = DisplayName(text) else { fatalError("test name \(text) is not valid") }
    return name
}

func rate(_ value: Double) -> PlaybackRate {
    guard let rate = PlaybackRate(value) else { fatalError("test rate \(value) is not valid") }
    return rate
}

func reason(_ text: String) -> SuspensionReason {
    guard let reason = SuspensionReason(rawValue: text) else { fatalError("test reason \(text) is not valid") }
    return reason
}

/// An absolute time argument.
func at(_ seconds: Double) -> TimeArgument { .absolute(MediaTime(seconds: seconds)) }

/// A relative time argument.
func by(_ seconds: Double) -> TimeArgument { .relative(seconds) }

func repeated(_ text: String, _ count: Int) -> String { String(repeating: text, count: count) }

/// Runs one row through `parser` and records every difference.
func check(_ row: ParserCase, with parser: LineParser = LineParser(),
           sourceLocation: SourceLocation = #_sourceLocation) {
    let result = parser.parse(row.line)
    switch (row.outcome, result) {
    case (.line(let expected), .success(let actual)):
        #expect(actual == expected, sourceLocation: sourceLocation)
    case (.refusal(let code, let command), .failure(let error)):
        #expect(error.code == code, "message: \(error.message)", sourceLocation: sourceLocation)
        #expect(error.command == command, "message: \(error.message)", sourceLocation: sourceLocation)
        // The contract: bad arguments get an error naming the command and its usage.
        // (Refusals for control characters are checked once, in ParserMessageTests.)
        if code == .badArguments, let command, !hasControlCharacter(row.line) {
            let usage = "usage: \(CommandTable.spec(command).usage)"
            #expect(error.message.contains(usage), "\"\(error.message)\" lacks \"\(usage)\"",
                    sourceLocation: sourceLocation)
        }
        #expect(error.message.utf8.count <= 400, "an error message stays short whatever the input",
                sourceLocation: sourceLocation)
    case (.line(let expected), .failure(let error)):
        Issue.record("expected \(expected), got \(error.code.rawValue) (/\(error.command?.rawValue ?? "-")): \(error.message)",
                     sourceLocation: sourceLocation)
    case (.refusal(let code, let command), .success(let actual)):
        Issue.record("expected \(code.rawValue) naming /\(command?.rawValue ?? "-"), but it parsed as \(actual)",
                     sourceLocation: sourceLocation)
    }
}

/// C0 controls other than tab, DEL and C1 controls: what `LineParser` refuses
/// before it looks at the command.
func hasControlCharacter(_ line: String) -> Bool {
    var text = Substring(line)
    if text.last == "\r" { text = text.dropLast() }
    return text.unicodeScalars.contains { ($0.value < 0x20 && $0 != "\t") || (0x7F..<0xA0).contains($0.value) }
}
