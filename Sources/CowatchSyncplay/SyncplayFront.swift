import CowatchClient
import CowatchCore
import CowatchTime
import Foundation
import Logging

/// Syncplay's protocol on its own port of `cowatch serve` (`syncplay-port`):
/// each Syncplay client is a `SyncplaySession`, and each session's member is a
/// connection of its own to this server's rooms, so that every rule of the
/// room (roles, kicks, bans, locks, passwords, rate limits, sizes) applies to
/// it as to any member. This class is the one place that carries out what the
/// sessions decide: it moves lines between the sockets and the sessions, opens
/// and feeds the members' connections, and keeps the sessions' timers. Every
/// event is handled on `queue`, one at a time.
public final class SyncplayFront: @unchecked Sendable {
    public struct Settings: Sendable {
        public var host = "127.0.0.1"
        /// 0 chooses a free port (tests).
        public var port = 0
        /// A PEM certificate chain and its key: with them, clients may upgrade to TLS.
        public var certificate: String?
        public var key: String?
        public var maximumConnections = 1000
        public var maximumConnectionsPerAddress = 16
        public var maximumLineBytes = 16_384
        public var maximumPendingBytes = 1 << 20
        public var session = SyncplaySession.Settings()
        /// The server's own WebSocket address, which the members' connections use.
        public var gateway: WebSocketAddress?
        /// The secret the server knows its front by: it then takes the Syncplay
        /// client's address from `X-Forwarded-For` (bans and limits reach the person).
        public var frontSecret = ""

        public init() {}
    }

    private let settings: Settings
    private let logger: Logger
    private let time: any TimeSource
    private let queue = DispatchQueue(label: "cowatch-syncplay")
    private let clients: WebSocketClients
    private var sockets: SyncplaySockets?
    // On `queue` only.
    private var sessions: [Int: SyncplaySession] = [:]
    private var addresses: [Int: String] = [:]
    private var members: [Int: (link: Int, connection: ClientConnection)] = [:]
    private var stopped = false
    // Read on the client library's thread as members' connections close, while `stop` waits.
    private let closing = NSLock()
    private var awaitingClose: [Int: Int] = [:]
    private var leavingGroup: DispatchGroup?
    private let metrics: SyncplayMetrics

    /// `metrics`: where it counts, which `/metrics` reads (`SyncplayMetrics.render`).
    public init(settings: Settings, metrics: SyncplayMetrics = SyncplayMetrics(), logger: Logger,
                time: any TimeSource = SystemTime()) throws {
        self.settings = settings
        self.metrics = metrics
        self.logger = logger
        self.time = time
        clients = try WebSocketClients(connectTimeout: .seconds(10), trust: nil)
    }

    /// Listens, and returns the port.
    public func start() throws(SyncplayStartError) -> Int {
        var tls: OpaquePointer?
        if let certificate = settings.certificate, let key = settings.key {
            tls = try SyncplaySockets.tlsContext(certificate: certificate, key: key)
        }
        let sockets = try SyncplaySockets(
            host: settings.host, port: settings.port,
            limits: .init(connections: settings.maximumConnections, connectionsPerAddress: settings.maximumConnectionsPerAddress,
                          lineBytes: settings.maximumLineBytes, pendingBytes: settings.maximumPendingBytes),
            tls: tls,
            handlers: .init(
                accepted: { [self] id, address in queue.async { [self] in accepted(id, address) } },
                line: { [self] id, line in queue.async { [self] in run(id, .line(line)) } },
                tooLong: { [self] id in queue.async { [self] in run(id, .lineTooLong) } },
                closed: { [self] id in queue.async { [self] in run(id, .clientGone) } }))
        self.sockets = sockets
        sockets.start()
        queue.async { [self] in tick() }
        return sockets.port
    }

    /// Every client is let go, and every member with it, before the server
    /// stops: each member leaves its room (1000), as Syncplay's client cannot
    /// resume one, and comes back under its name once the server is there again.
    /// Waits at most `within` for the rooms to have heard them leave.
    public func stop(within: MonotonicDuration = .seconds(2)) {
        let leaving = DispatchGroup()
        queue.sync { [self] in
            stopped = true
            // Closed without an Error: Syncplay's client then comes back by itself
            // once the server is there again (after an Error it would stop trying).
            for (id, _) in sessions { sockets?.close(id) }
            closing.withLock {
                for (id, member) in members {
                    leaving.enter()
                    awaitingClose[id] = member.link
                }
                leavingGroup = leaving
            }
            for (_, member) in members { member.connection.close(code: 1000) }
            sessions.removeAll()
            members.removeAll()
        }
        _ = leaving.wait(timeout: .now() + within.dispatchInterval)
        sockets?.stop()
        clients.shutdown()
    }

    private func accepted(_ id: Int, _ address: String) {
        guard !stopped else {
            sockets?.close(id)
            return
        }
        var session = settings.session
        session.tlsAvailable = settings.certificate != nil && settings.key != nil
        sessions[id] = SyncplaySession(settings: session, now: time.monotonic())
        addresses[id] = address
        metrics.add(\.accepted)
    }

    private func now() -> SyncplaySession.Now {
        SyncplaySession.Now(monotonic: time.monotonic(), server: time.now())
    }

    private func run(_ id: Int, _ event: SyncplaySession.Event) {
        guard var session = sessions[id] else { return }
        if case .line = event { metrics.add(\.lines) }
        let actions = session.handle(event, now: now())
        sessions[id] = session
        for action in actions { perform(id, action) }
        if sessions[id]?.isClosed == true {
            sessions[id] = nil
            addresses[id] = nil
            if case .clientGone = event {} else { sockets?.close(id) }
        }
    }

    private func perform(_ id: Int, _ action: SyncplaySession.Action) {
        switch action {
        case .write(let message):
            if message["Error"] != nil { metrics.add(\.errors) }
            sockets?.write(id, message.text)
        case .startTLS:
            metrics.add(\.tlsUpgrades)
            sockets?.startTLS(id)
        case .close:
            sockets?.close(id)
        case .openMember(let link):
            open(id, link)
        case .sendRoom(let line):
            members[id]?.connection.send(line)
        case .closeMember(let leaving):
            if let member = members.removeValue(forKey: id) {
                if leaving { member.connection.close(code: 1000) } else { member.connection.close() }
            }
        case .schedule(let timer, let delay):
            time.schedule(after: delay, on: queue) { [self] in run(id, .timer(timer)) }
        case .log(let message, let metadata):
            var fields = metadata.mapValues { Logger.MetadataValue.string($0) }
            fields["client"] = .string("\(id)")
            logger.info("\(message)", metadata: fields)
        }
    }

    private func open(_ id: Int, _ link: SyncplaySession.MemberLink) {
        // The previous connection, if any, is not closed here: a new one for the
        // same member replaces it (4002), and a new room's member left it already.
        members[id] = nil
        guard var address = settings.gateway else { return }
        address.path = "/rooms/\(link.room.rawValue)"
        address = address.adding("name", link.name).adding("player", "1").adding("software", link.software)
        if let resume = link.resume { address = address.adding("resume", resume) }
        if let owner = link.owner { address = address.adding("owner", owner) }
        if let password = link.password { address = address.adding("password", password) }
        var headers: [(name: String, value: String)] = [(name: SyncplayFront.secretHeader, value: settings.frontSecret)]
        if let client = addresses[id] { headers.append((name: "X-Forwarded-For", value: client)) }
        let number = link.link
        metrics.add(\.memberConnections)
        let connection = clients.connect(address, encoding: .json, handlers: ClientHandlers(
            opened: { [self] in queue.async { [self] in run(id, .memberOpened(link: number)) } },
            received: { [self] text in
                guard let event = try? JSONEventDecoding.decode(text) else { return }
                queue.async { [self] in run(id, .memberReceived(link: number, event)) }
            },
            closed: { [self] info in
                closing.withLock {
                    if awaitingClose[id] == number {
                        awaitingClose[id] = nil
                        leavingGroup?.leave()
                    }
                }
                queue.async { [self] in
                    if members[id]?.link == number { members[id] = nil }
                    run(id, .memberClosed(link: number, code: info.code, reason: info.reason))
                }
            }), headers: headers)
        members[id] = (number, connection)
    }

    /// The header by which the server knows the front's connections (`GatewayConfiguration.frontSecret`).
    public static let secretHeader = "X-Cowatch-Front"

    /// Every state interval, each session in a room is sent the room's state.
    private func tick() {
        guard !stopped else { return }
        for id in Array(sessions.keys) { run(id, .tick) }
        metrics.set(connected: sessions.count)
        time.schedule(after: settings.session.stateInterval, on: queue) { [self] in tick() }
    }
}

/// The front's counters, read by `/metrics` from another thread.
public final class SyncplayMetrics: @unchecked Sendable {
    public struct Counts: Sendable {
        public var accepted = 0
        public var lines = 0
        public var tlsUpgrades = 0
        public var memberConnections = 0
        public var connected = 0
        public var errors = 0
    }

    private let lock = NSLock()
    private var counts = Counts()

    func add(_ key: WritableKeyPath<Counts, Int>) {
        lock.withLock { counts[keyPath: key] += 1 }
    }

    func set(connected: Int) {
        lock.withLock { counts.connected = connected }
    }

    public init() {}

    public var snapshot: Counts { lock.withLock { counts } }

    /// The counts in Prometheus' text format, for the server's `/metrics`.
    public func render() -> String {
        let counts = snapshot
        var out = ""
        func single(_ name: String, _ type: String, _ help: String, _ value: Int) {
            out += "# HELP \(name) \(help)\n# TYPE \(name) \(type)\n\(name) \(value)\n"
        }
        single("cowatch_syncplay_clients", "gauge", "Syncplay clients connected to syncplay-port.", counts.connected)
        single("cowatch_syncplay_accepted_total", "counter", "Syncplay connections accepted.", counts.accepted)
        single("cowatch_syncplay_lines_total", "counter", "Lines read from Syncplay clients.", counts.lines)
        single("cowatch_syncplay_tls_upgrades_total", "counter", "Syncplay connections turned to TLS.", counts.tlsUpgrades)
        single("cowatch_syncplay_member_connections_total", "counter", "Connections opened to rooms for Syncplay clients' members.",
               counts.memberConnections)
        single("cowatch_syncplay_errors_total", "counter", "Syncplay Error messages sent (bad lines, refusals, removals).", counts.errors)
        return out
    }
}
