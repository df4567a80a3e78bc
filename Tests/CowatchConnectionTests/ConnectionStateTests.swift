import CowatchConnection
import CowatchTime
import Testing

/// A connection's state on a manual clock: events in, actions out, no sockets.
struct Wire {
    var state: ConnectionState
    var now = MonotonicInstant(microseconds: 1_000_000)
    let ping = OutboundFrame(Array("cowatch".utf8), kind: .ping, createdAt: MonotonicInstant(microseconds: 0))

    static let limits = ConnectionLimits(
        commandsPerSecond: 2, commandBurst: 4, rateLimitGrace: 3, outboxLimit: 8, readPauseBacklog: 4,
        stuckTimeout: .seconds(10), flushTimeout: .seconds(10), closeReplyTimeout: .seconds(5),
        pingInterval: .seconds(10), idleTimeout: .seconds(35))

    init(limits: ConnectionLimits = Wire.limits, maximumBytes: Int = 64, acceptsBinary: Bool = false) {
        state = ConnectionState(limits: limits, rules: .init(maximumBytes: maximumBytes, acceptsBinary: acceptsBinary),
                                now: now)
    }

    mutating func advance(seconds: Double) { now = now + .seconds(seconds) }

    mutating func receive(_ text: String, final: Bool = true) -> ConnectionState.Inbound {
        state.received(Array(text.utf8), binary: false, final: final, now: now)
    }

    mutating func receive(bytes: [UInt8], binary: Bool = false, final: Bool = true) -> ConnectionState.Inbound {
        state.received(bytes, binary: binary, final: final, now: now)
    }

    mutating func admit() -> ConnectionState.LineAdmission { state.admitLine(now: now) }

    /// Admits `count` lines in a row and returns what each got.
    mutating func admit(_ count: Int) -> [ConnectionState.LineAdmission] { (0..<count).map { _ in admit() } }

    @discardableResult
    mutating func queue(_ text: String = "event") -> [ConnectionAction] {
        state.enqueue(OutboundFrame(Array(text.utf8), createdAt: now), now: now)
    }

    mutating func write(budget: Int = 1 << 16) -> ConnectionState.Write { state.nextWrite(budget: budget, now: now) }

    @discardableResult
    mutating func wrote(stillBuffered: Bool = false) -> [ConnectionAction] { state.wrote(stillBuffered: stillBuffered, now: now) }

    mutating func tick() -> [ConnectionAction] { state.tick(now: now, ping: ping) }

    @discardableResult
    mutating func close(_ code: UInt16, _ reason: String = "bye") -> [ConnectionAction] {
        state.close(.init(code: code, reason: reason), now: now)
    }

    /// Writes until nothing is left; the texts of the frames written, and the close.
    mutating func drain() -> [String] {
        var written: [String] = []
        while true {
            switch write() {
            case .nothing:
                wrote()
                return written
            case .frames(let frames): written += frames.map { String(decoding: $0.payload, as: UTF8.self) }
            case .close(let close): written.append("close \(close.code) \(close.reason)")
            }
            wrote()
        }
    }
}

extension ConnectionState.Inbound {
    var text: String? {
        if case .message(let bytes, _) = self { String(decoding: bytes, as: UTF8.self) } else { nil }
    }

    var closeCode: UInt16? {
        if case .refused(let actions) = self, case .close(let frame)? = actions.first { frame.code } else { nil }
    }
}

@Suite("Connection state: receiving")
struct ConnectionReceivingTests {
    @Test("a text message in one piece is handed on whole")
    func whole() { var wire = Wire(); #expect(wire.receive("/play").text == "/play") }

    @Test("fragments are put together and handed on once the last arrives")
    func fragments() {
        var wire = Wire()
        #expect(wire.receive("/se", final: false) == .partial)
        #expect(wire.receive("ek 1:23").text == "/seek 1:23")
    }

    @Test("a character split between fragments is valid")
    func splitCharacter() {
        var wire = Wire()
        #expect(wire.receive(bytes: [0x68, 0xC3], final: false) == .partial)
        #expect(wire.receive(bytes: [0xA9]).text == "hé")
    }

    @Test("invalid UTF-8 closes with 1007 at the first bad fragment, before the message ends")
    func invalidEarly() { var wire = Wire(); #expect(wire.receive(bytes: [0x68, 0xC3, 0x28], final: false).closeCode == 1007) }

    @Test("a message that ends inside a character closes with 1007")
    func truncatedCharacter() { var wire = Wire(); #expect(wire.receive(bytes: [0x68, 0xE2, 0x82]).closeCode == 1007) }

    @Test("overlong forms and surrogates are invalid UTF-8")
    func overlongAndSurrogates() {
        #expect(!UTF8Validator.isValid([0xC0, 0xAF]))
        #expect(!UTF8Validator.isValid([0xE0, 0x80, 0xAF]))
        #expect(!UTF8Validator.isValid([0xED, 0xA0, 0x80]))
        #expect(!UTF8Validator.isValid([0xF4, 0x90, 0x80, 0x80]))
        #expect(UTF8Validator.isValid(Array("κόσμε 🎬".utf8)))
    }

    @Test("a refusal in the middle of a frame fails the connection once its close frame is out, without awaiting a reply")
    func midFrameRefusal() {
        var wire = Wire()
        let inbound = wire.state.received([0xED, 0xA0], binary: false, final: false, midFrame: true, now: wire.now)
        guard case .refused(let actions) = inbound, case .close(let frame)? = actions.first else {
            Issue.record("expected a close, got \(inbound)")
            return
        }
        #expect(frame.code == 1007 && !frame.awaitsReply)
        _ = wire.state.close(frame, now: wire.now)
        #expect(wire.write() == .close(frame))
    }

    @Test("a refusal between frames awaits the peer's close as usual")
    func betweenFramesRefusal() {
        var wire = Wire()
        #expect(wire.receive(bytes: [0xC0]) == .refused([.close(.init(code: 1007, reason: "invalid UTF-8", awaitsReply: true))]))
    }

    @Test("a binary message closes with 1003 on a member connection")
    func binary() { var wire = Wire(); #expect(wire.receive(bytes: [1, 2, 3], binary: true).closeCode == 1003) }

    @Test("the echo endpoint takes binary messages as they are")
    func echoBinary() {
        var wire = Wire(acceptsBinary: true)
        #expect(wire.receive(bytes: [0xFF, 0], binary: true) == .message([0xFF, 0], binary: true))
    }

    @Test("a message over the size limit closes with 1009, even in fragments")
    func oversize() {
        var wire = Wire(maximumBytes: 8)
        #expect(wire.receive("12345", final: false) == .partial)
        #expect(wire.receive("6789").closeCode == 1009)
    }

    @Test("once closing, what arrives is read and thrown away")
    func discardedWhileClosing() { var wire = Wire(); wire.close(1008); #expect(wire.receive("/who") == .discarded) }

    @Test("a closing peer that keeps sending past the closing read limit is hung up on")
    func closingReadLimit() {
        var limits = Wire.limits
        limits.closingReadLimit = 8
        var wire = Wire(limits: limits)
        wire.close(1008)
        #expect(wire.receive("/who /who") == .refused([.hangUp]))
    }

    @Test("a message split on line feeds gives its lines in order, blank ones included")
    func lines() { #expect(InboundMessage.lines(Array("/play\n\nhi".utf8)) == ["/play", "", "hi"]) }

    @Test("CRLF line endings split too, each line keeping its \\r for the parser to drop")
    func crlf() { #expect(InboundMessage.lines(Array("/play\r\n/pause\r\n".utf8)) == ["/play\r", "/pause\r", ""]) }
}

@Suite("Connection state: command rate")
struct ConnectionRateTests {
    @Test("a burst within the limit is executed")
    func burst() { var wire = Wire(); #expect(wire.admit(4) == Array(repeating: .execute, count: 4)) }

    @Test("the first line over the rate is refused with the rate-limited warning")
    func firstRefusal() { var wire = Wire(); _ = wire.admit(4); #expect(wire.admit() == .refused([.warnRateLimited])) }

    @Test("later refusals say nothing until the grace is spent, then close 1008 with a reason")
    func grace() {
        var wire = Wire()
        let answers = wire.admit(4 + 1 + 3 + 1)
        #expect(answers[5...7].allSatisfy { $0 == .refused([]) })
        guard case .refused(let actions) = answers[8], case .close(let frame)? = actions.first else {
            Issue.record("expected a close, got \(answers[8])")
            return
        }
        #expect(frame.code == 1008 && frame.reason.contains("too many commands"))
    }

    @Test("tokens earned back are spent again, but the episode goes on: a steady flood is closed")
    func steadyFloodIsClosed() {
        var wire = Wire()
        var answers: [ConnectionState.LineAdmission] = []
        for _ in 0..<40 {
            answers += wire.admit(2)
            wire.advance(seconds: 0.5)
        }
        #expect(answers.contains { if case .refused(let actions) = $0 { actions.contains { if case .close = $0 { true } else { false } } } else { false } })
    }

    @Test("a connection that slows down until its burst is back starts a new episode, with a new warning")
    func newEpisode() {
        var wire = Wire()
        _ = wire.admit(5)
        wire.advance(seconds: 2)
        _ = wire.admit(4)
        #expect(wire.admit() == .refused([.warnRateLimited]))
    }

    @Test("after the close decision no line is executed")
    func nothingAfterClose() { var wire = Wire(); wire.close(1008); #expect(wire.admit() == .refused([])) }
}

@Suite("Connection state: sending")
struct ConnectionSendingTests {
    @Test("the first frame queued asks for a write; the next ones wait for it")
    func requestsOneWrite() { var wire = Wire(); #expect(wire.queue() == [.requestWrite]); #expect(wire.queue() == []) }

    @Test("everything queued leaves in one write, in order")
    func coalesced() {
        var wire = Wire()
        wire.queue("state")
        wire.queue("notice")
        guard case .frames(let frames) = wire.write() else { Issue.record("no frames"); return }
        #expect(frames.map { String(decoding: $0.payload, as: UTF8.self) } == ["state", "notice"])
    }

    @Test("a write holds no more than its budget, but always one frame")
    func budget() {
        var wire = Wire()
        wire.queue(String(repeating: "a", count: 100))
        wire.queue("b")
        guard case .frames(let frames) = wire.write(budget: 10) else { Issue.record("no frames"); return }
        #expect(frames.count == 1)
    }

    @Test("frames carry their header: text, final, length")
    func framed() {
        let frame = OutboundFrame(Array("hi".utf8), createdAt: MonotonicInstant(microseconds: 0))
        #expect(Array(frame.framed) == [0x81, 2, 0x68, 0x69])
        #expect(WebSocketFraming.header(.text, length: 300) == [0x81, 126, 1, 44])
        #expect(WebSocketFraming.header(.text, length: 70_000) == [0x81, 127, 0, 0, 0, 0, 0, 1, 0x11, 0x70])
    }

    @Test("an outbox at its limit drops its backlog and asks for the latest state")
    func overflow() {
        var wire = Wire()
        for _ in 0..<8 { wire.queue() }
        let actions = wire.queue()
        #expect(actions.contains { if case .resynchronize(let dropped) = $0 { dropped.count == 8 } else { false } })
        #expect(wire.state.outbox.isEmpty && wire.state.overflowingSince == wire.now)
    }

    @Test("reading pauses when the backlog reaches its mark and resumes once half of it is gone")
    func readingPauses() {
        var wire = Wire()
        for _ in 0..<3 { wire.queue() }
        #expect(wire.queue() == [.pauseReading])
        _ = wire.write(budget: 14)
        #expect(wire.wrote() == [.requestWrite, .resumeReading])
    }

    @Test("a connection that stays overflowing past the stuck timeout is closed with 1008")
    func stuck() {
        var wire = Wire()
        for _ in 0..<9 { wire.queue() }
        wire.advance(seconds: 11)
        #expect(wire.tick() == [.close(.init(code: 1008, reason: "too slow to keep up"))])
    }

    @Test("an outbox that drains ends the overflow")
    func drainEndsOverflow() {
        var wire = Wire()
        for _ in 0..<9 { wire.queue() }
        _ = wire.drain()
        wire.advance(seconds: 11)
        #expect(wire.state.overflowingSince == nil)
        #expect(wire.tick() == [.requestWrite], "a ping, not a close")
    }
}

@Suite("Connection state: closing")
struct ConnectionClosingTests {
    @Test("a close sends what was queued first, then the close frame with code and reason")
    func flushesFirst() {
        var wire = Wire()
        wire.queue("reply 1")
        wire.queue("error")
        wire.close(1008, "too many commands")
        #expect(wire.drain() == ["reply 1", "error", "close 1008 too many commands"])
    }

    @Test("nothing queued after the close decision goes out")
    func nothingQueuedAfterClose() { var wire = Wire(); wire.close(1001); wire.queue("late"); #expect(wire.drain() == ["close 1001 bye"]) }

    @Test("a close asks for a write and resumes paused reading, so the peer's last writes are taken")
    func resumesReading() {
        var wire = Wire()
        for _ in 0..<4 { wire.queue() }
        #expect(wire.close(1008) == [.requestWrite, .resumeReading])
    }

    @Test("the peer's answer to our close finishes the connection")
    func answered() { var wire = Wire(); wire.close(1000); _ = wire.drain(); #expect(wire.state.peerClosed() == .finished) }

    @Test("a close the peer begins is answered by the library, and ends a flush in progress")
    func peerBegins() { var wire = Wire(); wire.queue(); wire.close(1008); #expect(wire.state.peerClosed() == .answer); #expect(wire.drain() == []) }

    @Test("a peer that takes nothing before the flush deadline is dropped without a close frame")
    func tookNothing() { var wire = Wire(); wire.queue(); wire.close(1008); wire.advance(seconds: 10); #expect(wire.tick() == [.drop(.tookNothing)]) }

    @Test("a peer that never answers our close frame is hung up on after the close timeout")
    func noAnswer() {
        var wire = Wire()
        wire.close(1001)
        _ = wire.drain()
        wire.advance(seconds: 4.9)
        #expect(wire.tick() == [])
        wire.advance(seconds: 0.1)
        #expect(wire.tick() == [.hangUp])
    }

    @Test("a second close decision changes nothing")
    func secondClose() { var wire = Wire(); wire.close(1008, "first"); #expect(wire.close(1001, "second") == []); #expect(wire.drain() == ["close 1008 first"]) }

    @Test("a long reason is cut to fit a control frame, at a character boundary")
    func longReason() {
        var wire = Wire()
        wire.close(1008, String(repeating: "é", count: 100))
        #expect(wire.drain().first.map { $0.utf8.count <= "close 1008 ".utf8.count + 123 } == true)
    }
}

@Suite("Connection state: liveness")
struct ConnectionLivenessTests {
    @Test("a ping is queued when due, and its pong gives the round trip")
    func pingPong() {
        var wire = Wire()
        wire.advance(seconds: 10)
        #expect(wire.tick() == [.requestWrite])
        wire.advance(seconds: 0.025)
        #expect(wire.state.ponged(now: wire.now) == [.reportRoundTrip(.milliseconds(25))])
    }

    @Test("one ping in flight at a time: an unanswered ping is not followed by another")
    func onePingInFlight() {
        var wire = Wire()
        wire.advance(seconds: 10)
        _ = wire.tick()
        wire.advance(seconds: 10)
        _ = wire.receive("still here")
        #expect(wire.tick() == [])
        #expect(wire.state.outbox.count == 1)
    }

    @Test("pongs sent unasked do not let pings pile up in the outbox of a peer that reads nothing")
    func unaskedPongs() {
        var wire = Wire()
        for _ in 0..<5 {
            wire.advance(seconds: 10)
            _ = wire.tick()
            _ = wire.state.ponged(now: wire.now)
        }
        #expect(wire.state.outbox.count == 1)
    }

    @Test("the first ping can be staggered, so that connections opened together are not pinged together")
    func staggeredFirstPing() {
        var wire = Wire()
        wire.state = ConnectionState(limits: Wire.limits, rules: .init(maximumBytes: 64, acceptsBinary: false),
                                     now: wire.now, firstPingAfter: .seconds(7))
        wire.advance(seconds: 6.9)
        #expect(wire.tick() == [])
        wire.advance(seconds: 0.1)
        #expect(wire.tick() == [.requestWrite])
    }

    @Test("no ping while a message is half received")
    func noPingMidMessage() { var wire = Wire(); _ = wire.receive("/se", final: false); wire.advance(seconds: 10); #expect(wire.tick() == []) }

    @Test("a connection silent past the idle timeout is closed with 1001")
    func idle() {
        var wire = Wire()
        wire.advance(seconds: 36)
        #expect(wire.tick() == [.close(.init(code: 1001, reason: "idle: no answer to pings"))])
    }

    @Test("anything heard keeps a connection alive")
    func heard() { var wire = Wire(); wire.advance(seconds: 30); _ = wire.receive("hi"); wire.advance(seconds: 30); #expect(!wire.tick().contains { if case .close = $0 { true } else { false } }) }
}
