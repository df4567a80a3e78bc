import CowatchTime
import DequeModule

/// One WebSocket connection's life as a value: what it has queued, whether it is
/// keeping up, its pings, its command rate, and how it closes. Events and `now`
/// go in; actions come out for the gateway to carry out
/// (`Gateway+Interpreter.swift`). No sockets, no clock: the rules are in
/// docs/gateway.md and tested in Tests/CowatchConnectionTests/ConnectionStateTests.swift.
///
/// A close the server decides on goes through three phases: `flushing` (no more
/// commands are taken and no new events are queued, but what was already queued
/// still goes out), `closeSent` (the close frame with its code and reason went
/// out; the peer's data is read and thrown away until its own close frame
/// arrives, so its last writes never meet a reset connection), then closed. A
/// peer that takes nothing at all is dropped when the flush deadline passes,
/// without a close frame: that is the one close without a code.
package struct ConnectionState {
    package enum Phase: Equatable {
        case open
        case flushing(CloseFrame, deadline: MonotonicInstant)
        case closeSent(CloseFrame, deadline: MonotonicInstant)
        case closed
    }

    package struct CloseFrame: Equatable, Sendable {
        package var code: UInt16
        package var reason: String
        /// Whether the peer's close frame is waited for after ours. Not when the
        /// close interrupts a frame the peer is still sending: the rest of that
        /// frame would be read as frames of their own, so the connection is failed
        /// (RFC 6455 §7.1.7) once the close frame is out.
        package var awaitsReply: Bool

        package init(code: UInt16, reason: String, awaitsReply: Bool = true) {
            self.code = code
            self.reason = reason
            self.awaitsReply = awaitsReply
        }
    }

    /// What a message may be: the member endpoints take text of a limited size;
    /// the conformance echo endpoint takes anything up to a large limit.
    package struct MessageRules: Equatable {
        package var maximumBytes: Int
        package var acceptsBinary: Bool

        package init(maximumBytes: Int, acceptsBinary: Bool) {
            self.maximumBytes = maximumBytes
            self.acceptsBinary = acceptsBinary
        }
    }

    package private(set) var phase = Phase.open
    package private(set) var outbox = Deque<OutboundFrame>()
    /// Reading is paused (libwebsockets rx flow control) while the peer leaves its
    /// events unread: its next commands would only add to a backlog it does not take.
    package private(set) var readingPaused = false
    package private(set) var lastHeard: MonotonicInstant
    package private(set) var pingSentAt: MonotonicInstant?
    package private(set) var nextPingAt: MonotonicInstant
    /// Since the outbox first overflowed, while it has not drained.
    package private(set) var overflowingSince: MonotonicInstant?
    /// Lines refused for rate since the connection last kept to its rate.
    package private(set) var refusedLines = 0
    /// Bytes read and thrown away since the close decision.
    package private(set) var discardedWhileClosing = 0

    private let limits: ConnectionLimits
    private let rules: MessageRules
    private var limiter: RateLimiter
    private var message = MessageAssembly()

    /// `firstPingAfter` staggers the first ping: connections opened together (a
    /// room filling, clients coming back after a restart) would otherwise be
    /// pinged together, every interval, and their pongs all answered at once.
    package init(limits: ConnectionLimits, rules: MessageRules, now: MonotonicInstant,
                 firstPingAfter: MonotonicDuration? = nil) {
        self.limits = limits
        self.rules = rules
        limiter = RateLimiter(rate: limits.commandsPerSecond, burst: limits.commandBurst, now: now)
        lastHeard = now
        nextPingAt = now + (firstPingAfter ?? limits.pingInterval)
    }

    package var isOpen: Bool { phase == .open }

    // MARK: - Receiving

    package enum Inbound: Equatable {
        /// More of the message is to come.
        case partial
        /// A whole message, its UTF-8 checked (text) or as it came (binary).
        case message([UInt8], binary: Bool)
        /// Nothing to do with it: the connection is closing, its data is discarded.
        case discarded
        /// The message broke a rule; the connection closes.
        case refused([ConnectionAction])
    }

    /// A piece of a message arrived (a fragment, or part of one); `midFrame` when
    /// the rest of its frame is still to come.
    package mutating func received(_ bytes: some Collection<UInt8>, binary: Bool, final: Bool, midFrame: Bool = false,
                                   now: MonotonicInstant) -> Inbound {
        lastHeard = now
        guard phase == .open else {
            // What a closing peer still sends is read and thrown away, so that its
            // last writes meet no reset; but only so much of it.
            discardedWhileClosing += bytes.count
            return discardedWhileClosing > limits.closingReadLimit ? .refused([.hangUp]) : .discarded
        }
        func refuse(_ code: UInt16, _ reason: String) -> Inbound {
            message.reset()
            return .refused([.close(CloseFrame(code: code, reason: reason, awaitsReply: !midFrame))])
        }
        if binary && !rules.acceptsBinary { return refuse(1003, "binary messages are not accepted; send text") }
        guard message.bytes.count + bytes.count <= rules.maximumBytes else {
            return refuse(1009, "message over \(rules.maximumBytes) bytes")
        }
        if !binary && !message.utf8.feed(bytes) { return refuse(1007, "invalid UTF-8") }
        message.bytes.append(contentsOf: bytes)
        guard final else { return .partial }
        if !binary && !message.utf8.isComplete { return refuse(1007, "invalid UTF-8: the message ends inside a character") }
        let whole = message.bytes
        message.reset()
        return .message(whole, binary: binary)
    }

    /// Whether a message is half received (pings wait until it is whole, so that
    /// no control frame lands in the middle of a client's fragmented send).
    package var isReceivingMessage: Bool { !message.bytes.isEmpty }

    package enum LineAdmission: Equatable {
        case execute
        /// Not executed; the actions say what the peer is told, if anything.
        case refused([ConnectionAction])
    }

    /// One line of a message asks to be executed: the command rate decides.
    /// Over the rate a line is refused; the first refused line of an episode gets
    /// the `rate-limited` error; more than the grace allows closes with 1008. The
    /// episode ends once the connection has kept to its rate long enough to earn a
    /// whole burst back, so a client that floods at twice the rate is still closed.
    package mutating func admitLine(now: MonotonicInstant) -> LineAdmission {
        guard phase == .open else { return .refused([]) }
        if refusedLines > 0 && limiter.isFull(now: now) { refusedLines = 0 }
        if limiter.take(now: now) { return .execute }
        refusedLines += 1
        if refusedLines == 1 { return .refused([.warnRateLimited]) }
        if refusedLines > limits.rateLimitGrace + 1 {
            return .refused([.close(CloseFrame(code: 1008, reason: "too many commands: over the rate after the rate-limited error"))])
        }
        return .refused([])
    }

    // MARK: - Sending

    /// Queues a frame. A full outbox is not given a backlog: what it holds is
    /// dropped and the gateway queues the room's latest state instead
    /// (`.resynchronize`), which bypasses the limit.
    package mutating func enqueue(_ frame: OutboundFrame, now: MonotonicInstant) -> [ConnectionAction] {
        guard phase == .open else { return [] }
        guard outbox.count < limits.outboxLimit else {
            let dropped = Array(outbox)
            outbox.removeAll()
            if overflowingSince == nil { overflowingSince = now }
            return [.resynchronize(dropped: dropped)] + pauseIfBackedUp()
        }
        let write = append(frame)
        let pause = pauseIfBackedUp()
        // The usual answers are shared arrays: queueing a broadcast for each member
        // allocates nothing.
        return pause.isEmpty ? write : write + pause
    }

    /// The room's latest state after an overflow: queued past the limit, since it
    /// replaces everything that was dropped.
    package mutating func enqueueResynchronization(_ frames: [OutboundFrame]) -> [ConnectionAction] {
        guard phase == .open else { return [] }
        var actions: [ConnectionAction] = []
        for frame in frames { actions += append(frame) }
        return actions
    }

    private mutating func append(_ frame: OutboundFrame) -> [ConnectionAction] {
        frame.pendingRecipients += 1
        outbox.append(frame)
        return outbox.count == 1 ? Self.requestWrite : []
    }

    /// Immutable and holding no frame, so sharing it across threads is safe (the
    /// action type is not Sendable only because other cases carry frames).
    nonisolated(unsafe) private static let requestWrite: [ConnectionAction] = [.requestWrite]

    private mutating func pauseIfBackedUp() -> [ConnectionAction] {
        guard !readingPaused, outbox.count >= limits.readPauseBacklog else { return [] }
        readingPaused = true
        return [.pauseReading]
    }

    package enum Write: Equatable {
        case nothing
        /// These frames, in order, in one write.
        case frames([OutboundFrame])
        /// The close frame: everything queued has gone out.
        case close(CloseFrame)

        package static func == (lhs: Write, rhs: Write) -> Bool {
            switch (lhs, rhs) {
            case (.nothing, .nothing): true
            case (.frames(let a), .frames(let b)): a.count == b.count && zip(a, b).allSatisfy { $0 === $1 }
            case (.close(let a), .close(let b)): a == b
            default: false
            }
        }
    }

    /// The socket can take a write: what goes in it. As many queued frames as fit
    /// in `budget` bytes (always at least one), so that a `state` and its
    /// `notice` leave in one `send()`.
    package mutating func nextWrite(budget: Int, now: MonotonicInstant) -> Write {
        switch phase {
        case .closeSent, .closed:
            return .nothing
        case .open, .flushing:
            break
        }
        if let first = outbox.popFirst() {
            var frames = [first]
            var bytes = first.framedLength
            while let next = outbox.first, bytes + next.framedLength <= budget {
                frames.append(next)
                bytes += next.framedLength
                outbox.removeFirst()
            }
            return .frames(frames)
        }
        if case .flushing(let close, _) = phase {
            phase = .closeSent(close, deadline: now + limits.closeReplyTimeout)
            return .close(close)
        }
        return .nothing
    }

    /// A write went to the socket; `stillBuffered` when the library holds part of
    /// it for later (the socket took less).
    package mutating func wrote(stillBuffered: Bool, now: MonotonicInstant) -> [ConnectionAction] {
        var actions: [ConnectionAction] = []
        if case .flushing = phase {
            actions.append(.requestWrite)
        } else if !outbox.isEmpty || stillBuffered {
            // While part of a write is buffered the next callback comes only once
            // it has gone, and only then has the connection caught up.
            actions.append(.requestWrite)
        } else {
            overflowingSince = nil
        }
        if readingPaused && phase == .open && outbox.count <= limits.readPauseBacklog / 2 {
            readingPaused = false
            actions.append(.resumeReading)
        }
        return actions
    }

    // MARK: - Closing

    /// The server closes the connection: flush, then the close frame. Reading
    /// resumes so that the peer's last writes are taken (and thrown away) rather
    /// than answered with a reset.
    package mutating func close(_ frame: CloseFrame, now: MonotonicInstant) -> [ConnectionAction] {
        guard phase == .open else { return [] }
        phase = .flushing(CloseFrame(code: frame.code, reason: WebSocketFraming.closeReason(frame.reason),
                                     awaitsReply: frame.awaitsReply),
                          deadline: now + limits.flushTimeout)
        var actions: [ConnectionAction] = [.requestWrite]
        if readingPaused {
            readingPaused = false
            actions.append(.resumeReading)
        }
        return actions
    }

    package enum PeerClose: Equatable {
        /// The peer began the close: the library answers it.
        case answer
        /// The peer answered ours: the connection is done.
        case finished
    }

    /// The peer's close frame arrived.
    package mutating func peerClosed() -> PeerClose {
        switch phase {
        case .closeSent:
            phase = .closed
            return .finished
        case .open, .flushing, .closed:
            // A close from the peer ends a flush too: it will read nothing more.
            phase = .closed
            outbox.removeAll()
            return .answer
        }
    }

    /// Frames that never went out, for the gateway's accounting once the
    /// connection is gone.
    package mutating func takeUnsent() -> [OutboundFrame] {
        let frames = Array(outbox)
        outbox.removeAll()
        phase = .closed
        return frames
    }

    // MARK: - Liveness

    /// A pong came back: it answers the one ping in flight, if any.
    package mutating func ponged(now: MonotonicInstant) -> [ConnectionAction] {
        lastHeard = now
        guard let sentAt = pingSentAt else { return [] }
        pingSentAt = nil
        return [.reportRoundTrip(now - sentAt)]
    }

    /// Called periodically: deadlines, idleness, a connection stuck behind, pings.
    package mutating func tick(now: MonotonicInstant, ping: OutboundFrame) -> [ConnectionAction] {
        switch phase {
        case .closed:
            return []
        case .flushing(_, let deadline):
            return now >= deadline ? [.drop(.tookNothing)] : []
        case .closeSent(_, let deadline):
            return now >= deadline ? [.hangUp] : []
        case .open:
            break
        }
        if now - lastHeard > limits.idleTimeout {
            return [.close(CloseFrame(code: 1001, reason: "idle: no answer to pings"))]
        }
        if let since = overflowingSince, now - since > limits.stuckTimeout {
            return [.close(CloseFrame(code: 1008, reason: "too slow to keep up"))]
        }
        // One ping in flight at a time, and none while one still waits in the
        // outbox (a peer may send pongs unasked): a peer that does not answer is
        // left to the idle timeout, and its outbox does not fill with pings.
        guard now >= nextPingAt, pingSentAt == nil, !isReceivingMessage,
              !outbox.contains(where: { $0.kind == .ping }) else { return [] }
        nextPingAt = now + limits.pingInterval
        pingSentAt = now
        // A ping jumps the outbox's limit: it is tiny and measures liveness.
        return append(ping)
    }
}

/// The timing and size limits of every connection, from `GatewayConfiguration`.
package struct ConnectionLimits: Equatable, Sendable {
    package var commandsPerSecond: Double
    package var commandBurst: Double
    /// Lines refused for rate, after the `rate-limited` error, before close 1008.
    package var rateLimitGrace: Int
    /// Frames queued for one connection; past this it gets the latest state instead.
    package var outboxLimit: Int
    /// Frames queued at which reading from the connection pauses.
    package var readPauseBacklog: Int
    /// How long the outbox may stay overflowing before close 1008.
    package var stuckTimeout: MonotonicDuration
    /// How long a closing connection may take to receive what was queued; past it
    /// the connection is dropped without a close frame.
    package var flushTimeout: MonotonicDuration
    /// How long to wait for the peer's close frame after ours.
    package var closeReplyTimeout: MonotonicDuration
    /// Bytes a closing peer may still send (read and thrown away) before the
    /// socket is closed without waiting further: a peer that keeps flooding
    /// after its close would otherwise cost a core until the close timeout.
    package var closingReadLimit: Int
    package var pingInterval: MonotonicDuration
    package var idleTimeout: MonotonicDuration

    package init(commandsPerSecond: Double, commandBurst: Double, rateLimitGrace: Int, outboxLimit: Int,
                 readPauseBacklog: Int, stuckTimeout: MonotonicDuration, flushTimeout: MonotonicDuration,
                 closeReplyTimeout: MonotonicDuration, pingInterval: MonotonicDuration, idleTimeout: MonotonicDuration,
                 closingReadLimit: Int = 1 << 20) {
        self.commandsPerSecond = commandsPerSecond
        self.commandBurst = commandBurst
        self.rateLimitGrace = rateLimitGrace
        self.outboxLimit = outboxLimit
        self.readPauseBacklog = readPauseBacklog
        self.stuckTimeout = stuckTimeout
        self.flushTimeout = flushTimeout
        self.closeReplyTimeout = closeReplyTimeout
        self.pingInterval = pingInterval
        self.idleTimeout = idleTimeout
        self.closingReadLimit = closingReadLimit
    }
}

/// What the gateway is asked to do for one connection.
package enum ConnectionAction: Equatable {
    /// Ask the library for a writeable callback.
    case requestWrite
    /// Stop and restart reading from the socket (rx flow control).
    case pauseReading
    case resumeReading
    /// Send the sender the `rate-limited` error.
    case warnRateLimited
    /// Begin closing with this code and reason (goes back in as `close`).
    case close(ConnectionState.CloseFrame)
    /// The outbox overflowed: these frames were dropped; queue the latest state.
    case resynchronize(dropped: [OutboundFrame])
    /// Tell the member's room this ping's round trip (for the lead of its starts).
    case reportRoundTrip(MonotonicDuration)
    /// Close the socket now, without a close frame.
    case drop(DropCause)
    /// Our close frame went out and no answer came: close the socket.
    case hangUp

    package enum DropCause: String, Equatable, Sendable {
        /// What was queued could not be sent before the flush deadline.
        case tookNothing = "took-nothing"
    }

    package static func == (lhs: ConnectionAction, rhs: ConnectionAction) -> Bool {
        switch (lhs, rhs) {
        case (.requestWrite, .requestWrite), (.pauseReading, .pauseReading), (.resumeReading, .resumeReading),
             (.warnRateLimited, .warnRateLimited), (.hangUp, .hangUp):
            true
        case (.close(let a), .close(let b)): a == b
        case (.resynchronize(let a), .resynchronize(let b)): a.count == b.count && zip(a, b).allSatisfy { $0 === $1 }
        case (.reportRoundTrip(let a), .reportRoundTrip(let b)): a == b
        case (.drop(let a), .drop(let b)): a == b
        default: false
        }
    }
}

/// The message being received: its bytes so far and their UTF-8 state.
private struct MessageAssembly {
    var bytes: [UInt8] = []
    var utf8 = UTF8Validator()

    mutating func reset() {
        bytes = []
        utf8.reset()
    }
}

/// A text message's lines: split on the byte `\n`, each handled in order. On
/// bytes, not characters: in a Swift string `\r\n` is one character, so a CRLF
/// line ending would not split there (the parser drops a line's trailing `\r`).
package enum InboundMessage {
    package static func lines(_ message: [UInt8]) -> [Substring] {
        message.split(separator: 0x0A, omittingEmptySubsequences: false).map {
            Substring(String(decoding: $0, as: UTF8.self))
        }
    }
}
