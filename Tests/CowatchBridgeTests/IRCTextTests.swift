@testable import CowatchBridge
import Testing

@Suite("IRC text")
struct IRCTextTests {
    @Test("formatting codes are removed, colours with their numbers, and other controls")
    func plain() {
        #expect(IRCText.plain("\u{02}bold\u{02} \u{1D}it\u{1D} \u{1F}u\u{1F} \u{16}rev\u{0F}") == "bold it u rev")
        #expect(IRCText.plain("\u{03}04red\u{03} \u{03}4,12on blue\u{03} \u{03}12,x") == "red on blue ,x")
        #expect(IRCText.plain("\u{03}123") == "3")
        #expect(IRCText.plain("\u{04}FF00AAhex\u{04}") == "hex")
        #expect(IRCText.plain("a\tb\u{07}c\u{7F}d") == "a bcd")
        #expect(IRCText.plain("caf\u{E9} \u{1F600}") == "caf\u{E9} \u{1F600}")
    }

    @Test("CTCP: ACTION for /me, and other requests")
    func ctcp() {
        #expect(IRCText.ctcp("\u{01}ACTION waves\u{01}")?.command == "ACTION")
        #expect(IRCText.ctcp("\u{01}ACTION waves\u{01}")?.argument == "waves")
        #expect(IRCText.ctcp("\u{01}version\u{01}")?.command == "VERSION")
        #expect(IRCText.ctcp("\u{01}ACTION unterminated")?.argument == "unterminated")
        #expect(IRCText.ctcp("plain") == nil)
        #expect(IRCText.action("claps") == "\u{01}ACTION claps\u{01}")
    }

    @Test("text cut at spaces into pieces that fit")
    func pieces() {
        #expect(IRCText.pieces("short", maximumBytes: 10, maximumPieces: 3) == ["short"])
        #expect(IRCText.pieces("one two three four", maximumBytes: 9, maximumPieces: 5) == ["one two", "three", "four"])
        #expect(IRCText.pieces("abcdefghij", maximumBytes: 4, maximumPieces: 5) == ["abcd", "efgh", "ij"])
        // Never inside a character: é is two bytes.
        #expect(IRCText.pieces("ééééé", maximumBytes: 5, maximumPieces: 5) == ["éé", "éé", "é"])
    }

    @Test("too long for the pieces allowed: the last ends in an ellipsis")
    func truncated() {
        let pieces = IRCText.pieces(String(repeating: "word ", count: 100), maximumBytes: 20, maximumPieces: 2)
        #expect(pieces.count == 2)
        #expect(pieces[1].hasSuffix("…"))
        #expect(pieces.allSatisfy { $0.utf8.count <= 20 })
    }

    @Test("one character of a thousand combining marks is cut between scalars, and the cutting ends")
    func combining() {
        let heavy = "e" + String(repeating: "\u{301}", count: 1000)
        let pieces = IRCText.pieces(heavy, maximumBytes: 100, maximumPieces: 50)
        #expect(!pieces.isEmpty)
        #expect(pieces.allSatisfy { $0.utf8.count <= 100 })
    }

    @Test("nicks compare under the server's case mapping")
    func caseMapping() {
        #expect(IRCCaseMapping.rfc1459.fold("Ann[x]\\~") == "ann{x}|^")
        #expect(IRCCaseMapping.strictRFC1459.fold("Ann[x]\\~") == "ann{x}|~")
        #expect(IRCCaseMapping.ascii.fold("Ann[x]\\~") == "ann[x]\\~")
    }
}
