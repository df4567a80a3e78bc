import SlashCommands
import Testing

/// The parser as a table: every row is an input line and its expected outcome.
/// The rows live in `ParserTable+*.swift`; `check` compares code, command and,
/// for bad arguments, that the message carries the command's usage.
@Suite("Line parser table")
struct ParserTableTests {
    @Test("every command parses in its valid forms and refuses bad arguments", arguments: CommandRows.all)
    func commands(_ row: ParserCase) {
        check(row)
    }

    @Test("time arguments: 95, 95.5, 1:35, 1:01:35, +10, -10 and nothing hostile", arguments: ArgumentRows.times)
    func times(_ row: ParserCase) {
        check(row)
    }

    @Test("rates from 0.25 to 4, with or without x", arguments: ArgumentRows.rates)
    func rates(_ row: ParserCase) {
        check(row)
    }

    @Test("URLs are http or https with a host, visible and at most 2048 bytes", arguments: ArgumentRows.urls)
    func urls(_ row: ParserCase) {
        check(row)
    }

    @Test("display names are 1-32 visible characters", arguments: ArgumentRows.names)
    func names(_ row: ParserCase) {
        check(row)
    }

    @Test("/policy takes control, stall and wait in any order", arguments: ArgumentRows.policy)
    func policy(_ row: ParserCase) {
        check(row)
    }

    @Test("/ready, /ended and /time take bounded plain numbers", arguments: ArgumentRows.numbers)
    func numbers(_ row: ParserCase) {
        check(row)
    }

    @Test("chat, // escapes and blank lines", arguments: LineRows.chatAndBlank)
    func chat(_ row: ParserCase) {
        check(row)
    }

    @Test("command names are case-insensitive; unknown ones are refused", arguments: LineRows.commandNames)
    func commandNames(_ row: ParserCase) {
        check(row)
    }

    @Test("control characters other than tab are refused", arguments: LineRows.controlCharacters)
    func controlCharacters(_ row: ParserCase) {
        check(row)
    }

    @Test("lines over maximumLineBytes are refused as too-long", arguments: LineRows.length)
    func length(_ row: ParserCase) {
        check(row)
    }

    @Test("the table has a valid form of every command")
    func tableCoversEveryCommand() {
        let rows = CommandRows.all + ArgumentRows.all + LineRows.all
        var parsed = Set<CommandName>()
        var refused = Set<CommandName>()
        for row in rows {
            switch row.outcome {
            case .line(.command(let command)): parsed.insert(command.name)
            case .refusal(.badArguments, let command?): refused.insert(command)
            default: break
            }
        }
        #expect(parsed == Set(CommandName.allCases))
        #expect(refused == Set(CommandName.allCases))
        #expect(rows.count >= 400)
    }
}

@Suite("Line parser messages")
struct ParserMessageTests {
    let parser = LineParser()

    func error(_ line: String) -> CommandError? {
        if case .failure(let error) = parser.parse(line) { return error }
        return nil
    }

    @Test("an unknown command says \"unknown command /foo (try /help)\" and names no command")
    func unknownCommand() {
        let foo = error("/foo")
        #expect(foo?.code == .unknownCommand)
        #expect(foo?.message == "unknown command /foo (try /help)")
        #expect(foo?.command == nil)
        #expect(error("/FOO bar baz")?.message == "unknown command /FOO (try /help)")
    }

    @Test("an unknown command's name is cut short in the message")
    func unknownCommandIsCut() throws {
        let message = try #require(error("/" + repeated("x", 3000))?.message)
        #expect(message.count < 100)
        #expect(message.hasPrefix("unknown command /xxxx"))
        #expect(message.hasSuffix("(try /help)"))
    }

    @Test("bad arguments name the command and give its usage")
    func badArgumentsCarryUsage() throws {
        let seek = try #require(error("/seek abc"))
        #expect(seek.code == .badArguments)
        #expect(seek.command == .seek)
        #expect(seek.message.hasPrefix("/seek: "))
        #expect(seek.message.contains("usage: /seek <time>"))
        #expect(try #require(error("/rate 9")).message.contains("usage: /rate <rate>"))
        #expect(try #require(error("/resume at")).message.contains("usage: /resume [reason] [at <time>]"))
    }

    /// One line per command that its parser must refuse.
    static let badLines: [CommandName: String] = [
        .help: "/help nosuch", .nick: "/nick a\u{200B}b", .watch: "/watch ftp://x", .join: "/join x",
        .leave: "/leave x", .end: "/end x", .play: "/play later", .pause: "/pause x", .seek: "/seek x",
        .rate: "/rate 9", .suspend: "/suspend a/b", .resume: "/resume at", .catchup: "/catchup 0",
        .queue: "/queue ftp://x", .next: "/next x", .dequeue: "/dequeue x", .subtitles: "/subtitles ftp://x", .move: "/move 1", .autoplay: "/autoplay maybe", .player: "/player maybe",
        .ready: "/ready x", .buffering: "/buffering x", .ended: "/ended x", .duration: "/duration 1 soon", .have: "/have 1 perhaps", .time: "/time x", .who: "/who x",
        .status: "/status x", .policy: "/policy x y", .op: "/op", .deop: "/deop", .kick: "/kick", .ban: "/ban",
        .unban: "/unban", .bans: "/bans x", .mute: "/mute", .unmute: "/unmute", .slow: "/slow x",
        .lock: "/lock x", .unlock: "/unlock x", .password: "/password", .invite: "/invite x", .invites: "/invites x",
        .revoke: "/revoke", .token: "/token", .tokens: "/tokens x", .untoken: "/untoken", .public: "/public", .me: "/me",
        .voice: "/voice shout",
    ]

    @Test("every command refuses bad arguments with its own usage", arguments: CommandName.allCases)
    func everyCommandGivesItsUsage(_ name: CommandName) throws {
        let line = try #require(Self.badLines[name], "no bad line for /\(name.rawValue)")
        let refusal = try #require(error(line))
        #expect(refusal.code == .badArguments)
        #expect(refusal.command == name)
        #expect(refusal.message.contains("(usage: \(CommandTable.spec(name).usage))"))
    }

    @Test("a too-long line says the limit and names a known command")
    func tooLong() throws {
        let refusal = try #require(error("/me " + repeated("a", 5000)))
        #expect(refusal.code == .tooLong)
        #expect(refusal.command == .me)
        #expect(refusal.message.contains("4096"))
    }

    @Test("maximumLineBytes is the limit in UTF-8 bytes, after a trailing \\r is dropped")
    func customLimit() {
        let parser = LineParser(maximumLineBytes: 16)
        check(Row.command("/me 0123456789ab", .me("0123456789ab")), with: parser)
        check(Row.command("/me 0123456789ab\r", .me("0123456789ab")), with: parser)
        check(Row.refused("/me 0123456789abc", .tooLong, .me), with: parser)
        check(Row.chat(repeated("é", 8), repeated("é", 8)), with: parser)
        check(Row.refused(repeated("é", 8) + "a", .tooLong, nil), with: parser)
        check(Row.refused(repeated("a", 17), .tooLong, nil), with: parser)
    }

    @Test("control characters are refused with a message saying so")
    func controlCharacterMessage() throws {
        let refusal = try #require(error("hi \u{1B}[2J"))
        #expect(refusal.code == .badArguments)
        #expect(refusal.message.contains("control characters"))
    }

    /// docs/protocol.md: "an unknown command or bad arguments [...] the sender alone gets an
    /// `error` naming the command and its usage". A control character in a known
    /// command's line is such a refusal.
    @Test("control characters in a known command are refused with its usage", arguments: [
        Row.bad("/nick a\u{1B}[2Jb", .nick), Row.bad("/me \u{1B}]0;owned\u{07}", .me), Row.bad("/seek 95\u{0}", .seek),
    ])
    func controlCharacterUsage(_ row: ParserCase) throws {
        guard case .refusal(_, let command?) = row.outcome else { return }
        let refusal = try #require(error(row.line))
        #expect(refusal.code == .badArguments)
        #expect(refusal.command == command)
        #expect(refusal.message.contains("usage: \(CommandTable.spec(command).usage)"))
    }

    @Test("each line of a multi-line message parses on its own")
    func multiLineMessage() {
        let message = "hello\n/play\n\n//x\n/seek 1:35\r"
        let lines = message.split(separator: "\n", omittingEmptySubsequences: false).map { parser.parse($0) }
        #expect(lines == [
            .success(.chat("hello")), .success(.command(.play(now: false))), .success(.empty),
            .success(.chat("/x")), .success(.command(.seek(at(95)))),
        ])
    }
}
