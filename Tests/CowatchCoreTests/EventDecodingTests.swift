@testable import CowatchCore
import CowatchCoreChecks
import CowatchTime
import SlashCommands
import Testing

/// The protocol's one decoder (Sources/CowatchCore/EventDecoding+JSON.swift) and
/// its reader (JSONReader.swift): every event the room sends reads back as
/// itself, in bytes and in the words a text client sees.
@Suite("Reading the JSON encoding back")
struct EventDecodingTests {
    typealias F = EncodingFixture

    /// Decodes `event`'s JSON and checks that it encodes to the same bytes, and
    /// says the same words. Media positions are on the wire to the millisecond,
    /// and the room keeps them finer, so the words of an event with a position
    /// (which rounds it down to the second) are compared through its bytes alone.
    static func roundTrip(_ event: RoomEvent, now: ServerInstant, sourceLocation: SourceLocation = #_sourceLocation) throws {
        let bytes = JSONEventEncoding.encode(event)
        let text = String(decoding: bytes, as: UTF8.self)
        let decoded = try #require(try JSONEventDecoding.decode(text), "no event from \(text)", sourceLocation: sourceLocation)
        #expect(String(decoding: JSONEventEncoding.encode(decoded), as: UTF8.self) == text, sourceLocation: sourceLocation)
        if !carriesPosition(event) {
            #expect(TextEventEncoding.lines(decoded, now: now) == TextEventEncoding.lines(event, now: now),
                    sourceLocation: sourceLocation)
        }
    }

    static func carriesPosition(_ event: RoomEvent) -> Bool {
        switch event {
        case .state, .reply(.status), .catchup: true
        default: false
        }
    }

    @Test("every kind of event and reply reads back as the same bytes and the same words")
    func fixtures() throws {
        var seen: Set<String> = []
        for event in F.events {
            try Self.roundTrip(event, now: F.now)
            seen.insert(F.caseName(event))
        }
        #expect(seen == F.allCaseNames)
    }

    @Test("what the wire carries comes back as the core's values")
    func values() throws {
        let state = try #require(try JSONEventDecoding.decode(WireJSON.text(.state(F.playing))))
        #expect(state == .state(F.playing))
        let welcome = try #require(try JSONEventDecoding.decode(WireJSON.text(.welcome(F.founding))))
        #expect(welcome == .welcome(F.founding))
        let renamed = try #require(try JSONEventDecoding.decode(
            WireJSON.text(.participant(F.alice, change: .renamed(from: DisplayName("alicia")!)))))
        #expect(renamed == .participant(F.alice, change: .renamed(from: DisplayName("alicia")!)))
        let left = try #require(try JSONEventDecoding.decode(WireJSON.text(.participantLeft(F.bob.id, name: F.bob.name, reason: .kicked))))
        #expect(left == .participantLeft(F.bob.id, name: F.bob.name, reason: .kicked))
        #expect(try JSONEventDecoding.decode(WireJSON.text(.error(F.badSeek))) == .error(F.badSeek))
        #expect(try JSONEventDecoding.decode(WireJSON.text(.catchup(F.catchup))) == .catchup(F.catchup))
    }

    @Test("what the wire does not carry: a ban's address is only there or not, the room's digests are empty")
    func lossyFields() throws {
        guard case .reply(.bans(let bans, let now))? = try JSONEventDecoding.decode(WireJSON.text(.reply(.bans(F.bans, now: F.now)))) else {
            Issue.record("not a bans reply")
            return
        }
        #expect(now == F.now)
        #expect(bans.map(\.address) == ["", nil])
        #expect(bans.allSatisfy { $0.identities.isEmpty })
        guard case .reply(.invite(let invite, let token, _))? =
                try JSONEventDecoding.decode(WireJSON.text(.reply(.invite(F.invite, token: "t0k", now: F.now)))) else {
            Issue.record("not an invite reply")
            return
        }
        #expect(token == "t0k" && invite.tokenDigest.isEmpty && invite.expires == F.invite.expires)
        // A live item's edge stays with the room.
        var live = F.playing
        live.session?.activity.live = true
        live.session?.activity.liveEdge = LiveEdge(position: MediaTime(seconds: 30), at: F.now)
        guard case .state(let read)? = try JSONEventDecoding.decode(WireJSON.text(.state(live))) else {
            Issue.record("not a state")
            return
        }
        #expect(read.session?.activity.live == true && read.session?.activity.liveEdge == nil)
    }

    @Test("a YouTube link's start and an own copy's file come back as the room read them")
    func sources() throws {
        let url = try #require(MediaURL("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=42"))
        let source = try #require(MediaSource.classify(url).source)
        var state = F.playing
        state.session?.activity = Activity(id: "a2", url: url, title: "t", identifier: source.identifier(for: url), source: source)
        try Self.roundTrip(.state(state), now: F.now)
        guard case .state(let read)? = try JSONEventDecoding.decode(WireJSON.text(.state(state))) else {
            Issue.record("not a state")
            return
        }
        #expect(read.session?.activity.source == source)
        #expect(read.session?.activity.source.start == MediaTime(seconds: 42))

        let copy = try #require(OwnCopy(hash: 0x8e24_5d96_79d3_1e12, size: 1_400_000_000, duration: 6130))
        state.session?.activity = Activity(id: "a3", url: nil, title: "mine", identifier: copy.identifier, source: .own(copy),
                                           duration: copy.duration)
        guard case .state(let own)? = try JSONEventDecoding.decode(WireJSON.text(.state(state))) else {
            Issue.record("not a state")
            return
        }
        #expect(own.session?.activity.source == .own(copy))
        try Self.roundTrip(.state(state), now: F.now)
    }

    @Test("every event of 60 random sessions reads back as the same bytes and words")
    func randomSessions() throws {
        var events = 0
        var kinds: Set<String> = []
        for sequence in 0..<60 {
            var generator = RandomSessionGenerator(seed: 0xDEC0_DE00 &+ UInt64(sequence), byteHeavyNames: sequence % 10 == 9)
            var driver = RoomDriver(generator.setup)
            driver.received = []
            for _ in 0..<200 {
                driver.perform(generator.nextStep(driver))
                for event in driver.received ?? [] {
                    try Self.roundTrip(event, now: driver.now)
                    kinds.insert(F.caseName(event))
                    events += 1
                }
                driver.received = []
            }
        }
        #expect(events > 10_000)
        // The sessions say most kinds of event; the fixtures hold the rest.
        #expect(kinds.isSuperset(of: ["welcome", "state", "participant", "participantLeft", "chat", "notice", "error"]))
    }

    @Test("an unknown type is no event; unknown keys are skipped, in any order")
    func forwardCompatible() throws {
        #expect(try JSONEventDecoding.decode(#"{"type":"whisper","who":["m1"]}"#) == nil)
        let chat = #"{"at":1700000000000,"extra":{"a":[1,2,{"b":null}]},"me":false,"text":"hi","name":"alice","from":"m1","type":"chat"}"#
        #expect(try JSONEventDecoding.decode(chat) == .chat(ChatLine(from: MemberID("m1"), name: DisplayName("alice")!, text: "hi",
                                                                    at: F.now, me: false)))
    }

    @Test("text that is not this protocol is refused with where and why", arguments: [
        #"{"type":"chat"}"#,
        #"{"type":"error","code":"no-such-code","message":"x","command":null}"#,
        #"{"type":"participant-left","id":"m2","name":"bob","reason":"vanished"}"#,
        #"{"type":"state","seq":1}"#,
        #"{"no":"type"}"#,
        #"["type","chat"]"#,
        #"{"type":"chat","from":"m1","name":"alice","text":"hi","at":1700000000000,"me":false} x"#,
        #"{"type":"catchup","from":1,"rate":99,"until":1}"#,
        #"{"type":"participant","participant":{"id":"m1","name":"\u0000","role":"host"},"change":"arrived"}"#,
    ])
    func refusals(text: String) {
        #expect(throws: JSONReader.Failure.self) { try JSONEventDecoding.decode(text) }
    }

    @Test("a frame's head: a state's type, seq and status, read without the rest")
    func head() throws {
        func head(_ text: String) throws -> JSONEventDecoding.Head {
            var text = text
            return try text.withUTF8 { try JSONEventDecoding.head($0) }
        }
        var waiting = F.playing
        waiting.playback.status = .waiting
        #expect(try head(WireJSON.text(.state(waiting))) == .init(type: "state", seq: 7, status: .waiting))
        #expect(try head(WireJSON.text(.chat(F.chat))) == .init(type: "chat", seq: nil, status: nil))
        #expect(try head(#"{"playback":{"at":1,"status":"paused"},"seq":3,"type":"state"}"#)
                == .init(type: "state", seq: 3, status: .paused))
        #expect(throws: JSONReader.Failure.self) { try head(#"{"seq":3}"#) }
    }
}

@Suite("JSONReader: JSON as RFC 8259 has it")
struct JSONReaderTests {
    static func read<T>(_ text: String, _ body: (inout JSONReader) throws -> T) throws -> T {
        var text = text
        return try text.withUTF8 { bytes in
            var reader = JSONReader(bytes)
            let value = try body(&reader)
            try reader.end()
            return value
        }
    }

    @Test("strings: escapes, surrogate pairs and UTF-8 as written")
    func strings() throws {
        #expect(try Self.read(#""a\"b\\c\/d\n\t\u00e9\ud83d\ude00 é""#) { try $0.readString() } == "a\"b\\c/d\n\té😀 é")
        #expect(try Self.read(#""""#) { try $0.readString() } == "")
    }

    @Test("numbers: integers exactly, fractions and exponents, whole numbers written as fractions")
    func numbers() throws {
        #expect(try Self.read("9007199254740993") { try $0.readInteger() } == 9_007_199_254_740_993)
        #expect(try Self.read("-9223372036854775808") { try $0.readInteger() } == Int64.min)
        #expect(try Self.read("1e3") { try $0.readInteger() } == 1000)
        #expect(try Self.read("723.250") { try $0.readNumber() } == 723.25)
        #expect(try Self.read("-0.5E-1") { try $0.readNumber() } == -0.05)
        #expect(throws: JSONReader.Failure.self) { try Self.read("9223372036854775808") { try $0.readInteger() } }
        #expect(throws: JSONReader.Failure.self) { try Self.read("1.5") { try $0.readInteger() } }
    }

    @Test("skipping any value, nested", arguments: [#"{"a":[1,{"b":"\u0041"},true,false,null,-2.5e3]}"#, "[]", "{}", #""x""#, "0"])
    func skip(text: String) throws {
        try Self.read(text) { try $0.skipValue() }
    }

    @Test("malformed text is refused", arguments: [
        "", "{", "[1,]", #"{"a":1,}"#, "[,1]", "01", "1.", "-", "1e", ".5", "+1", #""\x""#, #""\ud800""#, #""\udc00x""#,
        "\"a\u{01}\"", #""abc"#, "tru", "nul", #"{"a" 1}"#, #"{1:2}"#, "[1 2]", "1 2",
    ])
    func malformed(text: String) {
        #expect(throws: JSONReader.Failure.self) { try Self.read(text) { try $0.skipValue() } }
    }

    @Test("bytes that are not UTF-8 inside a string are refused")
    func notUTF8() {
        let bytes: [UInt8] = [0x22, 0xC3, 0x28, 0x22]
        #expect(throws: JSONReader.Failure.self) {
            try bytes.withUnsafeBufferPointer { buffer in
                var reader = JSONReader(buffer)
                _ = try reader.readString()
            }
        }
    }

    @Test("nesting is bounded")
    func depth() throws {
        let deep = String(repeating: "[", count: JSONReader.maximumDepth + 1) + String(repeating: "]", count: JSONReader.maximumDepth + 1)
        #expect(throws: JSONReader.Failure.self) { try Self.read(deep) { try $0.skipValue() } }
        let allowed = String(repeating: "[", count: JSONReader.maximumDepth) + String(repeating: "]", count: JSONReader.maximumDepth)
        try Self.read(allowed) { try $0.skipValue() }
    }
}
