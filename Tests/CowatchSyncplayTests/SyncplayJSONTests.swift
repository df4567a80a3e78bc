import CowatchCore
@testable import CowatchSyncplay
import Testing

@Suite("SyncplayJSON: reading and writing Syncplay's lines")
struct SyncplayJSONTests {
    @Test("parsed and written again: the same value, keys sorted, one line")
    func roundTrip() throws {
        let line = #"{"State": {"playstate": {"position": 12.5, "paused": true, "setBy": null}, "ping": {"latencyCalculation": 1700000000.25}}, "List": [1, "two", false, {}, []]}"#
        let value = try SyncplayJSON.parse(line)
        #expect(value.text == #"{"List": [1, "two", false, {}, []], "State": {"ping": {"latencyCalculation": 1700000000.25}, "playstate": {"paused": true, "position": 12.5, "setBy": null}}}"#)
        #expect(try SyncplayJSON.parse(value.text) == value)
        #expect(!value.text.contains("\n"))
    }

    @Test("members read as their kinds")
    func reading() throws {
        let value = try SyncplayJSON.parse(#"{"a": {"b": "c"}, "n": 3, "t": true, "l": [1], "z": null}"#)
        #expect(value["a"]?["b"]?.string == "c")
        #expect(value["n"]?.number == 3)
        #expect(value["t"]?.bool == true)
        #expect(value["l"]?.elements == [1])
        #expect(value["z"] == .null)
        #expect(value["missing"] == nil)
        #expect(value["n"]?.string == nil)
        #expect(value["a"]?.members?.keys.sorted() == ["b"])
        #expect(SyncplayJSON.number(.infinity).number == nil)
    }

    @Test("quotes, backslashes and line breaks are escaped")
    func escapes() throws {
        let value = SyncplayJSON.string("say \"hi\"\\ \n\r\t")
        #expect(value.text == #""say \"hi\"\\ \n\r\t""#)
        #expect(try SyncplayJSON.parse(value.text) == value)
    }

    @Test("U+2028 and U+2029 are escaped, so that no reader sees a line break")
    func lineSeparators() throws {
        let value = SyncplayJSON.string("a\u{2028}b\u{2029}c")
        #expect(value.text == #""a\u2028b\u2029c""#)
        #expect(try SyncplayJSON.parse(value.text) == value)
    }

    @Test("other control characters are written \\u00XX")
    func controlCharacters() throws {
        let value = SyncplayJSON.string("\u{0}\u{1}\u{1b}\u{1f} é 🎬")
        #expect(value.text == "\"\\u0000\\u0001\\u001b\\u001f é 🎬\"")
        #expect(try SyncplayJSON.parse(value.text) == value)
    }

    @Test("keys are escaped as strings are")
    func escapedKeys() throws {
        let value: SyncplayJSON = ["a\"b\n": 1]
        #expect(value.text == #"{"a\"b\n": 1}"#)
        #expect(try SyncplayJSON.parse(value.text) == value)
    }

    @Test("whole numbers are written without a fraction, others as Swift writes them")
    func numbers() throws {
        #expect(SyncplayJSON.number(3).text == "3")
        #expect(SyncplayJSON.number(-7).text == "-7")
        #expect(SyncplayJSON.number(0).text == "0")
        #expect(SyncplayJSON.number(1_700_000_000_000).text == "1700000000000")
        #expect(SyncplayJSON.number(12.5).text == "12.5")
        #expect(SyncplayJSON.number(0.001).text == "0.001")
        #expect(try SyncplayJSON.parse("1.0") == 1)
        #expect(try SyncplayJSON.parse("1.0").text == "1")
        #expect(try SyncplayJSON.parse("-2.5e1") == -25)
    }

    @Test("huge numbers are written as JSON reads them")
    func hugeNumbers() throws {
        let value: SyncplayJSON = .number(1e20)
        #expect(try SyncplayJSON.parse(value.text) == value)
    }

    @Test("NaN and infinity, which JSON has no words for, are written 0")
    func nonFinite() {
        #expect(SyncplayJSON.number(.nan).text == "0")
        #expect(SyncplayJSON.number(.infinity).text == "0")
        #expect(SyncplayJSON.number(-.infinity).text == "0")
    }

    @Test("nesting within the reader's bound is read; deeper is refused")
    func nesting() throws {
        let depth = JSONReader.maximumDepth
        let within = String(repeating: "[", count: depth) + String(repeating: "]", count: depth)
        #expect(throws: Never.self) { try SyncplayJSON.parse(within) }
        let deeper = String(repeating: "[", count: depth + 1) + String(repeating: "]", count: depth + 1)
        #expect(throws: (any Error).self) { try SyncplayJSON.parse(deeper) }
        let objects = String(repeating: #"{"a":"#, count: 10_000) + "1" + String(repeating: "}", count: 10_000)
        #expect(throws: (any Error).self) { try SyncplayJSON.parse(objects) }
    }

    @Test("text after the value is refused; spaces are not",
          arguments: [#"{"a": 1} x"#, #"{"a": 1}{"b": 2}"#, "1 2", "true false", #"{"a": 1},"#])
    func trailingText(line: String) {
        #expect(throws: (any Error).self) { try SyncplayJSON.parse(line) }
    }

    @Test("spaces around the value are taken")
    func surroundingSpaces() throws {
        #expect(try SyncplayJSON.parse("  {\"a\": 1} \t ") == ["a": 1])
    }

    @Test("what is not one JSON value is refused",
          arguments: ["", "nul", "tru", "{", #"{"a" 1}"#, #"{"a": 1,}"#, "[1,]", "'a'", #""unterminated"#, "NaN", "01", "\"\u{1}\""])
    func notJSON(line: String) {
        #expect(throws: (any Error).self) { try SyncplayJSON.parse(line) }
    }

    @Test("literals build the values they say")
    func literals() {
        let value: SyncplayJSON = ["s": "x", "b": true, "i": 2, "d": 2.5, "a": [nil], "o": [:]]
        #expect(value == .object(["s": .string("x"), "b": .bool(true), "i": .number(2), "d": .number(2.5),
                                  "a": .array([.null]), "o": .object([:])]))
    }
}
