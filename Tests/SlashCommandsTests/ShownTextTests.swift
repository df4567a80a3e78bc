import SlashCommands
import Testing

/// Text others read: what is taken out of it, and how lines quote it.
@Suite("Shown text")
struct ShownTextTests {
    @Test("quoting escapes quotes and backslashes, by scalar")
    func quoting() {
        #expect(ShownText.quoted("Episode 1") == "\"Episode 1\"")
        #expect(ShownText.quoted(#"Say "hi" \o/"#) == #""Say \"hi\" \\o/""#)
        #expect(ShownText.quoted("\"\u{0301}") == "\"\\\"\u{0301}\"")
        #expect(ShownText.quoted("") == "\"\"")
    }

    @Test("cleaning takes out bidirectional controls and invisible characters and is stable")
    func cleaning() {
        #expect(ShownText.cleaned("a\u{202E}b\u{200B}c\u{FFF9}d\u{E0041}") == "abcd")
        #expect(ShownText.cleaned("👩\u{200D}👩\u{200D}👧 ❤️") == "👩\u{200D}👩\u{200D}👧 ❤️")
        let cleaned = ShownText.cleaned("x\u{2067}y\u{2069}")
        #expect(ShownText.cleaned(cleaned) == cleaned)
    }
}
