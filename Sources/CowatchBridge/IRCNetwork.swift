import CowatchClient
import CowatchTime
import Foundation
import Logging

/// The IRC adapter: a `ChatNetwork` that carries out what `IRCSession` decides,
/// over an `IRCLink`. Events from the link's thread and from timers are handled
/// one at a time on `queue`.
public final class IRCNetwork: ChatNetwork, @unchecked Sendable {
    public let identity: String
    private let queue: DispatchQueue
    private let endpoint: IRCLink.Endpoint
    private let connectTimeout: MonotonicDuration
    private let logger: Logger
    /// Where events are timed and timers set.
    private let time: any TimeSource
    // On `queue` only.
    private var session: IRCSession
    private var links: [IRCSession.Attempt: IRCLink] = [:]
    private var deliver: (@Sendable (NetworkEvent) -> Void)?
    private let stopped = DispatchSemaphore(value: 0)
    private var stopping = false

    /// `tls` nil for plain `irc://`.
    public init(identity: String, host: String, port: Int, tls: (verify: Bool, caFile: String?)?, connectTimeout: MonotonicDuration,
                session: IRCSession.Settings, logger: Logger, time: any TimeSource = SystemTime()) {
        self.identity = identity
        self.time = time
        endpoint = IRCLink.Endpoint(host: host, port: port, tls: tls.map { IRCLink.TLSOptions(verify: $0.verify, caFile: $0.caFile) })
        self.connectTimeout = connectTimeout
        self.session = IRCSession(settings: session, seed: Backoff.seed(identity + session.nick))
        self.logger = logger
        queue = DispatchQueue(label: "cowatch-irc-\(host)")
    }

    public func start(events: @escaping @Sendable (NetworkEvent) -> Void) {
        queue.async { [self] in
            deliver = events
            run(.start(now: time.monotonic()))
        }
    }

    public func perform(_ command: NetworkCommand) {
        queue.async { [self] in run(.command(command, now: time.monotonic())) }
    }

    /// Says QUIT, and waits (a few seconds at most) for the connection to close.
    public func stop() {
        let waiting = queue.sync { () -> Bool in
            stopping = true
            run(.stop)
            deliver = nil
            return !links.isEmpty
        }
        if waiting { _ = SystemClock.wait(on: stopped, for: Self.quitWait) }
    }

    /// How long `stop` waits for the server to close after QUIT.
    static let quitWait = MonotonicDuration.seconds(5)

    private func run(_ event: IRCSession.Event) {
        for action in session.handle(event) { perform(action) }
    }

    private func perform(_ action: IRCSession.Action) {
        switch action {
        case .connect(let attempt):
            logger.info("connecting to IRC", metadata: ["server": "\(endpoint.host):\(endpoint.port)", "tls": "\(endpoint.tls != nil)"])
            let link = IRCLink(endpoint: endpoint, connectTimeout: connectTimeout, handlers: IRCLink.Handlers(
                connected: { [self] in queue.async { [self] in run(.connected(attempt, now: time.monotonic())) } },
                line: { [self] line in queue.async { [self] in run(.received(attempt, line, now: time.monotonic())) } },
                closed: { [self] reason in
                    queue.async { [self] in
                        links[attempt] = nil
                        run(.closed(attempt, reason: reason, now: time.monotonic()))
                        if stopping, links.isEmpty { stopped.signal() }
                    }
                }))
            links[attempt] = link
            link.start()
        case .write(let attempt, let line):
            links[attempt]?.write(line)
        case .disconnect(let attempt):
            links[attempt]?.close()
        case .schedule(let timer, let delay):
            time.schedule(after: delay, on: queue) { [self] in run(.timerFired(timer, now: time.monotonic())) }
        case .deliver(let event):
            deliver?(event)
        case .log(let entry):
            logger.log(entry, ["server": "\(endpoint.host):\(endpoint.port)"])
        }
    }
}

extension Logger {
    /// Writes a `LogEntry` a pure value decided on, with the caller's context.
    func log(_ entry: LogEntry, _ context: [String: String]) {
        let level: Logger.Level = switch entry.level {
        case .debug: .debug
        case .info: .info
        case .notice: .notice
        case .warning: .warning
        case .error: .error
        }
        var metadata: Logger.Metadata = [:]
        for (key, value) in context.merging(entry.metadata, uniquingKeysWith: { $1 }) { metadata[key] = .string(value) }
        log(level: level, "\(entry.message)", metadata: metadata)
    }
}
