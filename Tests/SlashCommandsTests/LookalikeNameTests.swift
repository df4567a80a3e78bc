import SlashCommands
import Testing

/// Names that cannot pass for someone else's: the values the parser and the
/// room build on.
@Suite("Names that look alike")
struct LookalikeNameTests {
    static func keys(_ text: String) -> Set<String> {
        Set(DisplayName(text)?.lookalikeKeys ?? [])
    }

    @Test("names that can be mistaken for each other share a lookalike key",
          arguments: [("Alice", "AIice"), ("Alice", "A1ice"), ("Alice", "ALICE"), ("Alice", "alice"),
                      ("Alice", "\u{FF21}lice"), ("coco", "\u{0441}\u{043E}\u{0441}\u{043E}"),
                      ("rn", "m"), ("Dana Scully", "dana scully")])
    func lookalikes(_ first: String, _ second: String) {
        #expect(!Self.keys(first).isEmpty && !Self.keys(second).isEmpty)
        #expect(!Self.keys(first).isDisjoint(with: Self.keys(second)))
    }

    @Test("names that cannot be mistaken for each other share none",
          arguments: [("Alice", "Alicia"), ("Alice", "Bob"), ("alice", "AIice"), ("Dana Scully", "DanaScully"),
                      ("guest", "guest-2"), ("Zoë", "Zoe")])
    func distinct(_ first: String, _ second: String) {
        #expect(Self.keys(first).isDisjoint(with: Self.keys(second)))
    }

    @Test("a refused name says why in words")
    func reasons() {
        #expect(DisplayName.validationProblem("\u{0410}lice")
                == "a name mixes scripts whose letters look alike (Cyrillic and Latin); write it in one script, or Latin with Chinese, Japanese or Korean")
        #expect(DisplayName.validationProblem("\u{3164}")
                == "a name takes visible characters and single spaces only (U+1160 HANGUL JUNGSEONG FILLER is a control or invisible character)")
        #expect(DisplayName.validationProblem("1\u{0661}") == "a name mixes digits of different number systems")
        #expect(DisplayName.validationProblem("Tanaka 田中") == nil)
    }

    @Test("a stored name is read under the rules of its time, never with invisible characters")
    func storedNames() {
        #expect(DisplayName(storedText: "\u{0410}lice")?.text == "\u{0410}lice")
        #expect(DisplayName(storedText: "Alice\u{200B}") == nil)
        #expect(DisplayName(storedText: "") == nil)
        #expect(DisplayName(storedText: "\u{2800}") == nil)
    }

    @Test("normalizing a name twice changes nothing",
          arguments: ["\u{FF21}\u{FF4C}\u{FF49}\u{FF43}\u{FF45}", " \u{3000}a\u{00A0} b ", "\u{FB01}", "e\u{0301}", "\u{00B4}x"])
    func normalizedIsStable(_ text: String) {
        let once = DisplayName.normalized(text)
        #expect(DisplayName.normalized(once) == once)
    }
}
