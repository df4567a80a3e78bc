import CowatchCore
@testable import CowatchCoreChecks
import Testing

/// The room checks' test for "every text-encoding line is one line" finds
/// exactly what `Character.isNewline` calls a line end, wherever it is in the
/// line, and nothing that merely shares bytes with one.
@Suite("The line-break check of the room invariants")
struct LineBreakCheckTests {
    static let breaks: [String] = ["\n", "\u{0B}", "\u{0C}", "\r", "\r\n", "\u{85}", "\u{2028}", "\u{2029}"]
    /// Characters whose UTF-8 shares a lead byte, or lead and second byte, with
    /// NEL or the separators: Ä (C3 84), ¢ (C2 A2), † (E2 80 A0), ‧ (E2 80 A7),
    /// U+202A (E2 80 AA), ⁄ (E2 81 84), and more.
    static let nearMisses: [String] = ["¢", "\u{84}", "\u{86}", "†", "‧", "\u{202A}", "⁄", "€", "é", "🙂", "\t", "\u{0}", "\u{1B}", "\u{7F}"]

    /// What the standard library calls a line with a line end in it.
    static func standard(_ line: String) -> Bool {
        line.contains { $0.isNewline }
    }

    @Test("every line end is found at the start, in the middle and at the end")
    func lineEnds() {
        for end in Self.breaks {
            #expect(Self.standard(end))
            for line in [end, "a" + end, end + "b", "¢†" + end + "‧", String(repeating: "x", count: 300) + end] {
                #expect(RoomDriver.hasLineBreak(line), "\(RoomStep.quoted(line))")
            }
        }
    }

    @Test("characters that share bytes with a line end are not one")
    func nearMisses() {
        for text in Self.nearMisses {
            #expect(!Self.standard(text))
            for line in [text, "a" + text + "b", text + text, String(repeating: text, count: 50)] {
                #expect(!RoomDriver.hasLineBreak(line), "\(RoomStep.quoted(line))")
            }
        }
        #expect(!RoomDriver.hasLineBreak(""))
    }

    @Test("the check agrees with the standard library on every pair of the characters above")
    func agreesWithTheStandardLibrary() {
        let pieces = Self.breaks + Self.nearMisses + ["a", " "]
        for first in pieces {
            for second in pieces {
                let line = first + second
                #expect(RoomDriver.hasLineBreak(line) == Self.standard(line), "\(RoomStep.quoted(line))")
            }
        }
    }
}
