/// The life of the terminal client's connection to its room, as a value: events
/// in (the connection opened, a message, a close, a line typed, a timer), actions
/// out (connect, send, print, wait, exit). `cowatch connect` carries the actions
/// out in one place (`Sources/cowatch/TerminalRunner.swift`); the rules are here,
/// tested without sockets or clocks (`Tests/CowatchClientTests`).
///
/// The rules, in short:
/// - A close is told at once, with its code and the server's reason in words.
/// - A session that was once open comes back by itself after a close that does not
///   say "stay away" (shutdown, a dropped connection, a rate or size refusal), with
///   a growing, jittered delay, and with the resume token of the newest `welcome`,
///   so the room sees the same member `reconnected` (docs/protocol.md, "Query
///   parameters"). A kick, a ban, a refusal (locked, password, bad token), a
///   replacement by a newer connection or a normal close is final.
/// - A first connection that fails is final: the person typed the address, and
///   hears at once what is wrong with it (a refused upgrade shows the server's own
///   answer).
/// - Lines typed while away are kept, up to a limit, and sent on return.
/// - At the end of input (Ctrl-D, `/quit`, the end of a bot's pipe) the client asks
///   `/time <marker>` and leaves once it is answered: every line before it has been
///   handled. A bot pipe then exits 1 when the server refused any of its lines.
import CowatchTime
import Foundation

public struct ClientLife: Sendable {
    public struct Settings: Sendable, Hashable {
        /// A person at a terminal, rather than a pipe.
        public var interactive: Bool
        /// Exit 0 even when lines were refused (bot pipes).
        public var keepGoing: Bool
        /// How long after a drop to keep trying; 0 never reconnects.
        public var reconnectFor: MonotonicDuration
        /// The first delay before reconnecting; each further try doubles it.
        public var firstDelay: MonotonicDuration
        public var maximumDelay: MonotonicDuration
        /// Lines kept while disconnected.
        public var maximumHeldLines: Int
        /// How long the server has to answer the end-of-input marker.
        public var confirmTimeout: MonotonicDuration

        public init(interactive: Bool, keepGoing: Bool = false, reconnectFor: MonotonicDuration = .seconds(300),
                    firstDelay: MonotonicDuration = .seconds(0.5), maximumDelay: MonotonicDuration = .seconds(15),
                    maximumHeldLines: Int = 20, confirmTimeout: MonotonicDuration = .seconds(10)) {
            self.interactive = interactive
            self.keepGoing = keepGoing
            self.reconnectFor = reconnectFor
            self.firstDelay = firstDelay
            self.maximumDelay = maximumDelay
            self.maximumHeldLines = maximumHeldLines
            self.confirmTimeout = confirmTimeout
        }
    }

    /// Connection attempts are numbered; events from an earlier attempt are stale.
    public typealias Attempt = Int

    public enum Timer: Sendable, Hashable {
        case reconnect(Attempt)
        case confirm
    }

    public enum Event: Sendable, Hashable {
        case start(now: MonotonicInstant)
        case opened(Attempt)
        case received(Attempt, String)
        case closed(Attempt, CloseInfo, now: MonotonicInstant)
        /// What a refused upgrade answered when asked again as plain HTTP: its
        /// status and body, or nil status when that could not be learned.
        case refusalExplained(Attempt, status: Int?, body: String, now: MonotonicInstant)
        case line(String)
        /// Standard input ended; `marker` is a `/time` value nobody would type.
        case inputEnded(marker: String)
        case timerFired(Timer, now: MonotonicInstant)
    }

    public enum Action: Sendable, Hashable {
        /// Open attempt number `Attempt`, carrying `resume=` when there is a token.
        case connect(Attempt, resume: String?)
        case send(String)
        /// Close the current connection with 1000.
        case close
        /// A line from the room, to standard output.
        case print(String)
        /// A line from the client itself, to standard error.
        case say(String)
        /// Ask the server again, as plain HTTP, why it refused the upgrade.
        case explainRefusal(Attempt)
        case schedule(Timer, after: MonotonicDuration)
        case exit(Int32)
    }

    private enum Phase: Sendable, Hashable {
        case idle
        case connecting(everOpened: Bool)
        case open
        /// Disconnected since `since`, next try scheduled.
        case away
        case leaving
        case ended
    }

    public let settings: Settings
    private var phase: Phase = .idle
    private var attempt: Attempt = 0
    /// Tries since the last time the connection was open, and the delays between them.
    private var backoff: Backoff
    public private(set) var resumeToken: String?
    private var held: [String] = []
    private var marker: String?
    private var inputEnded = false
    public private(set) var refusals: [String] = []
    /// When the connection was last lost, while trying to get it back.
    private var awaySince: MonotonicInstant?
    /// The last close was 4010: the room moved to another node.
    private var movedNow = false
    /// The open connection's welcome came, and whether any connection's ever did.
    private var welcomed = false
    private var everWelcomed = false
    /// The server refused something on the open connection before its welcome.
    private var refusedBeforeWelcome: String?

    public init(settings: Settings, resume: String? = nil, seed: UInt64 = 0x9E37_79B9_7F4A_7C15) {
        self.settings = settings
        self.resumeToken = resume
        self.backoff = Backoff(settings: Backoff.Settings(first: settings.firstDelay, maximum: settings.maximumDelay), seed: seed)
    }

    public mutating func handle(_ event: Event) -> [Action] {
        switch event {
        case .start:
            guard phase == .idle else { return [] }
            return connect(everOpened: false)

        case .opened(let number):
            guard number == attempt, case .connecting(let everOpened) = phase else { return [] }
            phase = .open
            welcomed = false
            refusedBeforeWelcome = nil
            awaySince = nil
            var actions: [Action] = everOpened ? [.say("cowatch: reconnected")] : []
            actions += held.map { .send($0) }
            held = []
            if let marker { actions += [.send("/time \(marker)"), .schedule(.confirm, after: settings.confirmTimeout)] }
            return actions

        case .received(let number, let text):
            guard number == attempt else { return [] }
            return received(text)

        case .closed(let number, let info, let now):
            guard number == attempt else { return [] }
            return closed(info, now: now)

        case .refusalExplained(let number, let status, let body, let now):
            guard number == attempt, case .connecting(let everOpened) = phase else { return [] }
            let answer = body.trimmingCharacters(in: .whitespacesAndNewlines)
            guard let status else {
                return everOpened ? away(now: now, why: "the server refused the connection")
                    : end("cowatch: the server refused the connection", code: 1)
            }
            let words = "the server answered \(status)" + (answer.isEmpty ? "" : ": \(answer)")
            // Busy or draining: worth another try, for a session that had been open.
            if everOpened, status == 503 || status == 429 || status >= 500 {
                return away(now: now, why: words)
            }
            return end("cowatch: " + words, code: 1)

        case .line(let text):
            // Nothing after the end of input is sent: `/quit` means the lines after it
            // (already piped, or typed while the last ones are confirmed) stay unsaid.
            guard !inputEnded else { return [] }
            if text.trimmingCharacters(in: .whitespacesAndNewlines).lowercased() == "/quit" { return endInput(marker: defaultMarker) }
            switch phase {
            case .open: return [.send(text)]
            case .connecting, .away:
                guard held.count < settings.maximumHeldLines else {
                    return [.say("cowatch: not connected; line dropped (\(held.count) already waiting)")]
                }
                held.append(text)
                // Lines typed (or piped) before the first connection opens simply wait for it.
                if case .connecting(everOpened: false) = phase { return [] }
                return [.say("cowatch: not connected; the line will be sent once back (\(held.count) waiting)")]
            case .idle, .leaving, .ended: return []
            }

        case .inputEnded(let marker):
            return endInput(marker: marker)

        case .timerFired(let timer, let now):
            switch timer {
            case .reconnect(let number):
                guard number == attempt, phase == .away, let since = awaySince else { return [] }
                if now - since > settings.reconnectFor {
                    return end("cowatch: gave up reconnecting after \(Self.seconds(now - since))", code: 1)
                }
                return connect(everOpened: true)
            case .confirm:
                guard marker != nil, phase == .open else { return [] }
                return end("cowatch: the server did not confirm the last lines within \(Self.seconds(settings.confirmTimeout))",
                           code: 1, closing: true)
            }
        }
    }

    /// The `/time` value used when `/quit` ends the session.
    private var defaultMarker: String { "0.\(attempt)12345" }

    private mutating func connect(everOpened: Bool) -> [Action] {
        attempt += 1
        phase = .connecting(everOpened: everOpened)
        return [.connect(attempt, resume: resumeToken)]
    }

    private mutating func endInput(marker: String) -> [Action] {
        guard !inputEnded else { return [] }
        inputEnded = true
        self.marker = marker
        switch phase {
        case .open: return [.send("/time \(marker)"), .schedule(.confirm, after: settings.confirmTimeout)]
        // Sent once back, after the held lines.
        case .connecting, .away: return []
        case .idle, .leaving, .ended: return []
        }
    }

    private mutating func received(_ text: String) -> [Action] {
        if let marker, text.contains("\"client\":\(marker)") || text.contains("client \(marker) ") {
            self.marker = nil
            phase = .leaving
            return [.close]
        }
        if let token = Self.resumeToken(inWelcome: text) {
            resumeToken = token
            // Tries count again from the first delay once the room has let us in,
            // not when the socket opens: a room that refuses every join (full,
            // say) is not asked again at once, over and over.
            if !welcomed { backoff.succeeded() }
            welcomed = true
            everWelcomed = true
        }
        if let refusal = Self.refusal(in: text) {
            refusals.append(refusal)
            if !welcomed { refusedBeforeWelcome = refusal }
        }
        return [.print(text)]
    }

    private mutating func closed(_ info: CloseInfo, now: MonotonicInstant) -> [Action] {
        switch phase {
        case .leaving:
            return finish()
        case .connecting(let everOpened):
            if info.code == nil, info.reason.hasPrefix("HS:") { return [.explainRefusal(attempt)] }
            if everOpened { return away(now: now, why: info.reason.isEmpty ? "could not connect" : info.reason) }
            let why = info.code.map { Self.describe(code: $0, reason: info.reason) } ?? info.reason
            return end("cowatch: could not connect: \(why.isEmpty ? "no answer" : why)", code: 1)
        case .open:
            let why = info.code.map { Self.describe(code: $0, reason: info.reason) }
                ?? "the connection dropped" + (info.reason.isEmpty ? "" : " (\(info.reason))")
            // Refused at the door (a full room) by a room that never let this
            // session in: said, and over, as an upgrade's refusal is.
            if !welcomed, !everWelcomed, refusedBeforeWelcome != nil || !Self.comesBack(after: info.code) {
                return end("cowatch: could not join: \(why)", code: 1)
            }
            guard Self.comesBack(after: info.code), settings.reconnectFor > .zero else {
                let code: Int32 = info.code == 1000 ? (failedExit ? 1 : 0) : 1
                return end("cowatch: disconnected: \(why)", code: code)
            }
            movedNow = info.code == 4010
            return away(now: now, why: why, announce: "cowatch: disconnected: \(why)")
        case .idle, .away, .ended:
            return []
        }
    }

    /// Gone until the next try, which comes after a doubling delay with jitter
    /// (half to all of it), so that a room's members do not all return at once.
    private mutating func away(now: MonotonicInstant, why: String, announce: String? = nil) -> [Action] {
        let since = awaySince ?? now
        awaySince = since
        if now - since > settings.reconnectFor {
            return end("cowatch: gave up reconnecting after \(Self.seconds(now - since)): \(why)", code: 1)
        }
        let doubling = backoff.next()
        // 4010 from a cluster node: the room moved; come back at once (within a
        // tenth of a second, spread), to whichever node serves it now.
        let delay = movedNow ? MonotonicDuration.seconds(0.1 * backoff.fraction()) : doubling
        movedNow = false
        phase = .away
        var actions: [Action] = []
        if let announce { actions.append(.say(announce)) } else if backoff.failures > 1 { actions.append(.say("cowatch: still away: \(why)")) }
        actions.append(.say("cowatch: reconnecting in \(Self.seconds(delay))"))
        actions.append(.schedule(.reconnect(attempt), after: delay))
        return actions
    }

    private var failedExit: Bool { !settings.interactive && !settings.keepGoing && !refusals.isEmpty }

    private mutating func finish() -> [Action] {
        phase = .ended
        var actions: [Action] = []
        if failedExit {
            actions.append(.say("cowatch: the server refused \(refusals.count) line(s): " + refusals.prefix(5).joined(separator: "; ")))
        }
        actions.append(.exit(failedExit ? 1 : 0))
        return actions
    }

    private mutating func end(_ message: String, code: Int32, closing: Bool = false) -> [Action] {
        phase = .ended
        var actions: [Action] = [.say(message)]
        if closing { actions.append(.close) }
        if failedExit {
            actions.append(.say("cowatch: the server refused \(refusals.count) line(s): " + refusals.prefix(5).joined(separator: "; ")))
        }
        actions.append(.exit(failedExit ? 1 : code))
        return actions
    }

    // MARK: - Reading the server's words

    /// Whether a close by the server leaves the door open (docs/protocol.md, "Close
    /// codes"): a shutdown, a drop or a refusal of one message does; a kick, a ban,
    /// a refusal of the connection itself, a replacement and a normal close do not.
    public static func comesBack(after code: UInt16?) -> Bool {
        guard let code else { return true }
        switch code {
        case 1000, 4001, 4002, 4003, 4004, 4005, 4006: return false
        // A cluster node: the room moved (4010), or no node could take it yet (4011).
        case 4010, 4011: return true
        default: return code < 4000 || code >= 4100
        }
    }

    /// A close code in words, with the server's reason when it gave one.
    public static func describe(code: UInt16, reason: String) -> String {
        let words: String = switch code {
        case 1000: "the server closed the connection"
        case 1001: "the server is going away"
        case 1003: "a binary message was sent"
        case 1006: "the connection dropped"
        case 1007: "a message was not valid UTF-8"
        case 1008: "refused by the server's limits"
        case 1009: "a message was over the server's size limit"
        case 1011: "the server failed"
        case 4010: "the room moved to another server"
        case 4011: "no server could take the room just now"
        case 4001: "removed by a host"
        case 4002: "you connected again from elsewhere"
        case 4003: "banned from the room"
        case 4004: "the room is locked"
        case 4005: "the room asks a password"
        case 4006: "the bot token is not valid here"
        default: "closed"
        }
        let said = reason.trimmingCharacters(in: .whitespacesAndNewlines)
        return "\(words) (\(code))" + (said.isEmpty ? "" : ": \(said)")
    }

    /// The resume token of a `welcome`, as a text line or a JSON object.
    public static func resumeToken(inWelcome text: String) -> String? {
        if text.hasPrefix("{") {
            guard text.contains("\"type\":\"welcome\""), let start = text.range(of: "\"resume\":\"") else { return nil }
            let token = text[start.upperBound...].prefix { $0 != "\"" }
            return token.isEmpty ? nil : String(token)
        }
        guard text.hasPrefix("* "), let start = text.range(of: "cowatch connect --resume ") else { return nil }
        let token = text[start.upperBound...].prefix { !$0.isWhitespace }
        return token.isEmpty ? nil : String(token)
    }

    /// The message of an `error` event (text lines start with `! `).
    public static func refusal(in text: String) -> String? {
        if text.hasPrefix("! ") { return String(text.dropFirst(2)) }
        guard text.hasPrefix("{"), text.contains("\"type\":\"error\"") else { return nil }
        guard let start = text.range(of: "\"message\":\"") else { return "refused" }
        var message = ""
        var escaped = false
        for character in text[start.upperBound...] {
            if escaped {
                message.append(character == "n" ? "\n" : character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else if character == "\"" {
                break
            } else {
                message.append(character)
            }
        }
        return message
    }

    static func seconds(_ span: MonotonicDuration) -> String {
        let value = span.seconds
        return value < 10 ? "\(Double(Int(value * 10)) / 10) s" : "\(Int(value)) s"
    }
}
