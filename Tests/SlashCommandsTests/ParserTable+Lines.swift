import SlashCommands

/// Whole lines: chat, blank lines, unknown commands, control characters, length.
enum LineRows {
    static let chatAndBlank: [ParserCase] = [
        Row.chat("hello", "hello"),
        Row.chat("hello world  ", "hello world  "),
        Row.chat("  hello", "  hello"),
        Row.chat(" /play", " /play"),
        Row.chat("//x", "/x"),
        Row.chat("//", "/"),
        Row.chat("///", "//"),
        Row.chat("// play", "/ play"),
        Row.chat("//play now", "/play now"),
        Row.chat("hi\tthere", "hi\tthere"),
        Row.chat("hello\r", "hello"),
        Row.chat("\"quoted\" \\ back\\slash", "\"quoted\" \\ back\\slash"),
        Row.chat("héllo 🎬 李 مرحبا", "héllo 🎬 李 مرحبا"),
        Row.chat("👩\u{200D}👩\u{200D}👧", "👩\u{200D}👩\u{200D}👧"),
        Row.chat("<script>alert(1)</script>", "<script>alert(1)</script>"),
        Row.chat("* alice paused at 0:12:03", "* alice paused at 0:12:03"),
        Row.empty(""),
        Row.empty(" "),
        Row.empty("    "),
        Row.empty("\t"),
        Row.empty(" \t \t "),
        Row.empty("\r"),
        Row.empty("   \r"),
        Row.empty(repeated(" ", 4096)),
        // Whitespace-only is whitespace-only in any script: no invisible chat lines.
        Row.empty("\u{00A0}"),
        Row.empty("\u{3000}"),
        Row.empty(" \u{2003} \u{00A0}"),
        // Bidirectional controls and invisible characters are taken out of chat;
        // what writing needs stays (joiners in emoji and Persian, emoji variation
        // selectors, an emoji tag sequence's tags).
        Row.chat("nice \u{202E}gnorw si ti\u{202C} film", "nice gnorw si ti film"),
        Row.chat("a\u{2066}b\u{2067}c\u{2068}d\u{2069}e\u{202A}f\u{202B}g\u{202D}h", "abcdefgh"),
        Row.chat("left\u{200E}right\u{200F}arabic\u{061C}", "leftrightarabic"),
        Row.chat("in\u{200B}vis\u{2060}ible\u{00AD} \u{FEFF}text\u{3164}", "invisible text"),
        Row.chat("hidden\u{E0068}\u{E0069}", "hidden"),
        Row.chat("//\u{202E}olleh", "/olleh"),
        Row.chat("❤️ 👩\u{200D}👩\u{200D}👧 می\u{200C}خواهم", "❤️ 👩\u{200D}👩\u{200D}👧 می\u{200C}خواهم"),
        Row.chat("🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}", "🏴\u{E0067}\u{E0062}\u{E0065}\u{E006E}\u{E0067}\u{E007F}"),
        Row.empty("\u{202E}"),
        Row.empty(" \u{200B}\u{2066} "),
        Row.chat("//\u{202E}", "/"),
    ]

    static let commandNames: [ParserCase] = [
        Row.command("/PLAY", .play(now: false)),
        Row.command("/Play", .play(now: false)),
        Row.command("/pLaY now", .play(now: true)),
        Row.command("/WHO", .who),
        Row.command("/Me waves", .me("waves")),
        Row.command("/play\r", .play(now: false)),
        Row.command("/seek 95\r", .seek(at(95))),
        Row.command("/me waves\r", .me("waves")),
        Row.command("/seek\t\t95", .seek(at(95))),
        Row.unknown("/foo"),
        Row.unknown("/FOO bar"),
        Row.unknown("/"),
        Row.unknown("/ play"),
        Row.unknown("/seek95"),
        Row.unknown("/play-now"),
        Row.unknown("/ｐｌａｙ"),
        Row.unknown("/play\u{200B}"),
        Row.unknown("/pla\u{0079}\u{0308}"),
        Row.unknown("/play\u{00A0}now"),
        Row.unknown("/🎬"),
        Row.unknown("/" + repeated("x", 3000)),
        Row.unknown("/help\u{202E}"),
    ]

    /// C0 controls (tab aside), DEL and C1 controls rewrite terminals or forge lines.
    static let controlCharacters: [ParserCase] = [
        Row.bad("/me \u{1B}[2J\u{1B}[H", .me),
        Row.bad("/me \u{1B}]0;owned\u{07}", .me),
        Row.bad("/seek 95\u{0}", .seek),
        Row.bad("/play \u{7F}", .play),
        Row.bad("/watch https://example.org/a.mp4 Title\u{85}Forged", .watch),
        Row.bad("/watch https://example.org/a.mp4 Title\u{9B}31m", .watch),
        Row.bad("/kick bob\u{8}\u{8}\u{8}alice", .kick),
        Row.bad("/me line one\nline two", .me),
        Row.bad("/me a\rb", .me),
        Row.bad("/play now\r\r", .play),
        Row.refused("hi\u{1B}[31mred", .badArguments, nil),
        Row.refused("\u{0}", .badArguments, nil),
        Row.refused("\u{7}", .badArguments, nil),
        Row.refused("hi\u{7F}", .badArguments, nil),
        Row.refused("hi\u{85}", .badArguments, nil),
        Row.refused("hi\u{9F}", .badArguments, nil),
        Row.refused("a\nb", .badArguments, nil),
        Row.refused("\u{1B}", .badArguments, nil),
        Row.refused("//x\u{1B}", .badArguments, nil),
        Row.refused("/foo\u{1B}", .badArguments, nil),
        Row.refused("\u{0}\u{0}\r", .badArguments, nil),
    ]

    static let length: [ParserCase] = [
        Row.chat(repeated("a", 4096), repeated("a", 4096)),
        Row.chat(repeated("a", 4096) + "\r", repeated("a", 4096)),
        Row.chat(repeated("é", 2048), repeated("é", 2048)),
        Row.refused(repeated("a", 4097), .tooLong, nil),
        Row.refused(repeated("é", 2049), .tooLong, nil),
        Row.refused(repeated("🎬", 1025), .tooLong, nil),
        Row.refused(repeated("a", 100_000), .tooLong, nil),
        Row.refused(repeated("\u{1B}", 5000), .tooLong, nil),
        Row.refused("/me " + repeated("a", 4093), .tooLong, .me),
        Row.refused("/ME " + repeated("a", 4093), .tooLong, .me),
        Row.refused("/watch https://example.org/" + repeated("p", 5000), .tooLong, .watch),
        Row.refused("/nick a" + repeated("\u{0301}", 3000), .tooLong, .nick),
        Row.refused("/seek " + repeated("9", 10_000), .tooLong, .seek),
        Row.refused("/" + repeated("x", 5000), .tooLong, nil),
        Row.refused("//" + repeated("x", 5000), .tooLong, nil),
    ]

    static let all: [ParserCase] = chatAndBlank + commandNames + controlCharacters + length
}
