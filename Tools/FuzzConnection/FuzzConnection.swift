import CowatchConnection
import CowatchTime
import FuzzSupport

/// The gateway's message path as one connection sees it: pieces of messages
/// (text or binary, final or not, any bytes), lines asking to be executed,
/// frames queued and written, closes from either side, and time passing, all
/// decoded from the fuzzer's bytes and fed to `ConnectionState`. After every step
/// the state is checked against a plain model of what the rules in
/// docs/gateway.md promise.
@main
enum FuzzConnection {
    static func main() {
        FuzzMain.run { bytes in
            var input = FuzzInput(bytes)
            var run = ConnectionRun()
            while !input.isAtEnd { run.step(&input) }
            run.finish()
        }
    }
}

struct ConnectionRun {
    static let limits = ConnectionLimits(
        commandsPerSecond: 5, commandBurst: 8, rateLimitGrace: 3, outboxLimit: 6, readPauseBacklog: 4,
        stuckTimeout: .seconds(10), flushTimeout: .seconds(10), closeReplyTimeout: .seconds(5),
        pingInterval: .seconds(10), idleTimeout: .seconds(35), closingReadLimit: 64)
    static let maximumBytes = 48

    var now = MonotonicInstant(microseconds: 1_000_000)
    var state: ConnectionState
    let ping = OutboundFrame(Array("ping".utf8), kind: .ping, createdAt: MonotonicInstant(microseconds: 0))

    // The model.
    var pending: [UInt8] = []
    var pendingBinary: Bool?
    var queued: [OutboundFrame] = []
    var executed: [MonotonicInstant] = []
    var closeDecided = false
    var closeWritten = false
    var peerClosed = false
    /// The gateway dropped or hung up the socket: no more events come.
    var gone = false
    var serial = 0

    init() {
        state = ConnectionState(limits: Self.limits, rules: .init(maximumBytes: Self.maximumBytes, acceptsBinary: false),
                                now: now)
    }

    mutating func step(_ input: inout FuzzInput) {
        guard !gone else {
            _ = input.byte()
            return
        }
        switch input.below(9) {
        case 0, 1: receive(&input)
        case 2: admit()
        case 3: enqueue()
        case 4: write(budget: 8 + input.below(64))
        case 5: now = now + .milliseconds(Int64(input.uint16()))
        case 6: tick()
        case 7: if input.below(4) == 0 { close(code: UInt16(1000 + input.below(16))) } else { pong() }
        default: if input.below(8) == 0 { peerClose() } else { write(budget: 1 << 16) }
        }
        check()
    }

    mutating func receive(_ input: inout FuzzInput) {
        let flags = input.byte()
        let binary = flags & 1 != 0
        let final = flags & 2 != 0
        let piece = Array(input.bytes(input.below(24)))
        let wasOpen = state.isOpen
        let outcome = state.received(piece, binary: binary, final: final, now: now)
        switch outcome {
        case .discarded:
            expect(!wasOpen, "data discarded while open")
        case .partial:
            expect(wasOpen && !final, "partial while closing, or for a final piece")
            pending += piece
            pendingBinary = binary
        case .message(let message, let isBinary):
            expect(wasOpen && final, "a message while closing, or before the final piece")
            expect(message == pending + piece, "the message is not its pieces put together")
            expect(message.count <= Self.maximumBytes, "a message over the limit came through")
            expect(!isBinary, "a binary message came through where none is accepted")
            // The differential check: the standard library must agree it is valid.
            expect(String(validating: message, as: UTF8.self) != nil, "invalid UTF-8 came through: \(message)")
            pending = []
        case .refused(let actions) where !wasOpen:
            // A closing peer that sent more than the closing read limit.
            expect(actions == [.hangUp], "refused while closing with \(actions)")
            expect(state.discardedWhileClosing > Self.limits.closingReadLimit, "hung up within the closing read limit")
            gone = true
        case .refused(let actions):
            guard case .close(let frame)? = actions.first, actions.count == 1 else {
                fail("a refusal is one close, not \(actions)")
            }
            let whole = pending + piece
            switch frame.code {
            case 1003: expect(binary, "1003 for text")
            case 1009: expect(whole.count > Self.maximumBytes, "1009 within the limit")
            case 1007:
                expect(!binary, "1007 for binary")
                // Invalid now, or (final) incomplete: never for valid, complete text.
                expect(!(final && String(validating: whole, as: UTF8.self) != nil), "1007 for valid UTF-8 \(whole)")
            default: fail("refused with \(frame.code)")
            }
            pending = []
            perform(actions)
        }
    }

    mutating func admit() {
        let wasOpen = state.isOpen
        switch state.admitLine(now: now) {
        case .execute:
            expect(wasOpen, "a line executed after the close decision")
            executed.append(now)
            // Within any window, at most a burst plus what the rate earns.
            let window = executed.filter { now - $0 <= .seconds(1) }
            expect(Double(window.count) <= Self.limits.commandBurst + Self.limits.commandsPerSecond + 1,
                   "\(window.count) lines executed in one second")
        case .refused(let actions):
            perform(actions)
        }
    }

    mutating func enqueue() {
        serial += 1
        let frame = OutboundFrame(Array("event \(serial)".utf8), createdAt: now)
        let wasOpen = state.isOpen
        let actions = state.enqueue(frame, now: now)
        if !wasOpen { expect(actions.isEmpty, "a frame queued after the close decision") }
        var overflowed = false
        for action in actions {
            if case .resynchronize(let dropped) = action {
                overflowed = true
                expect(dropped.map(ObjectIdentifier.init) == queued.map(ObjectIdentifier.init),
                       "the overflow dropped something other than the backlog")
                queued = []
                let latest = OutboundFrame(Array("latest".utf8), createdAt: now)
                _ = state.enqueueResynchronization([latest])
                queued.append(latest)
            }
        }
        if wasOpen && !overflowed { queued.append(frame) }
        perform(actions.filter { if case .resynchronize = $0 { false } else { true } })
    }

    mutating func write(budget: Int) {
        switch state.nextWrite(budget: budget, now: now) {
        case .nothing:
            expect(queued.isEmpty || closeWritten || peerClosed, "nothing written with frames queued")
        case .frames(let frames):
            expect(!closeWritten, "frames written after the close frame")
            expect(!frames.isEmpty, "an empty write")
            expect(frames.count == 1 || frames.reduce(0) { $0 + $1.framedLength } <= budget, "a write over its budget")
            let expected = queued.prefix(frames.count)
            expect(frames.map(ObjectIdentifier.init) == expected.map(ObjectIdentifier.init), "frames out of order")
            queued.removeFirst(frames.count)
            _ = state.wrote(stillBuffered: false, now: now)
        case .close:
            expect(closeDecided && queued.isEmpty && !closeWritten, "a close frame before the flush, or twice")
            closeWritten = true
        }
    }

    mutating func tick() {
        let before = state.outbox.count
        let actions = state.tick(now: now, ping: ping)
        if state.outbox.count == before + 1 { queued.append(ping) }
        perform(actions)
    }

    mutating func pong() { _ = state.ponged(now: now) }

    mutating func close(code: UInt16) {
        let wasOpen = state.isOpen
        let actions = state.close(.init(code: code, reason: "fuzz"), now: now)
        expect(wasOpen == !actions.isEmpty, "a close decision that did not take, or took twice")
        if wasOpen { closeDecided = true }
    }

    mutating func peerClose() {
        _ = state.peerClosed()
        peerClosed = true
        queued = []
    }

    mutating func perform(_ actions: [ConnectionAction]) {
        for action in actions {
            switch action {
            case .close(let frame): close(code: frame.code)
            case .drop, .hangUp:
                expect(closeDecided, "a socket dropped without a close decision")
                gone = true
            default: break
            }
        }
    }

    func check() {
        if closeDecided || peerClosed { expect(!state.isOpen, "open after a close") }
        expect(state.outbox.count <= Self.limits.outboxLimit + 2, "the outbox grew past its limit: \(state.outbox.count)")
        expect(state.outbox.map(ObjectIdentifier.init) == queued.map(ObjectIdentifier.init), "the outbox and the model disagree")
    }

    /// Whatever is left is handed back once, as when the socket closes.
    mutating func finish() {
        let unsent = state.takeUnsent()
        expect(unsent.count == queued.count, "unsent frames lost")
        expect(state.outbox.isEmpty && !state.isOpen, "the connection lives on after it closed")
    }

    func expect(_ condition: Bool, _ message: @autoclosure () -> String) {
        if !condition { fail(message()) }
    }

    func fail(_ message: String) -> Never {
        fatalError("connection: \(message)")
    }
}
