import CowatchClient
import CowatchConnection
import CowatchCore
import CowatchStore
import CowatchTime
import CowatchWeb
import Foundation
import Logging
import SlashCommands

/// The server: rooms behind a libwebsockets context on one service thread.
///
/// Everything mutable here is touched only on the service thread, inside
/// libwebsockets callbacks; that confinement is what makes the class safe to share.
/// Other threads may only call `stop()` and `waitUntilStopped()`.
public final class Gateway: @unchecked Sendable {
    public enum StartError: Error, CustomStringConvertible {
        /// libwebsockets made no context; why, as far as its error lines tell.
        case contextFailed(LWSStartupFailure)

        public var description: String {
            switch self {
            case .contextFailed(let cause): cause.description
            }
        }
    }

    let configuration: GatewayConfiguration
    let logger: Logger
    /// Where the gateway reads the time, once per event (`SkippableTime` in tests).
    let time: any TimeSource
    /// The time of the event being handled (`eventBegins`).
    private(set) var eventTime: GatewayState.Now
    /// Where rooms outlive a restart; nil keeps them in memory only.
    let store: (any RoomStore)?
    let parser: LineParser
    /// The browser client's files.
    let web: WebRoot
    /// Sent with every HTTP response (HTTPResponse.securityHeaders(_:)).
    let securityHeaders: [String]

    // Service-thread state.
    var server: LWSServer?
    /// The gateway's own decisions (`GatewayState`): the front door, the work
    /// done for strangers, the rooms' timers, housekeeping and shutdown.
    var state: GatewayState
    /// The rooms, connections, seats, routes and links (`GatewayTables`: only
    /// its named changes write them).
    let tables: GatewayTables
    var connections: [UInt64: Connection] { tables.connections }
    var rooms: [RoomName: RoomEntry] { tables.rooms }
    var carried: [UInt64: Connection] { tables.carried }
    /// What the event being handled does to the world, carried out at its edge
    /// (`eventEnds`), in order.
    var pendingEffects: [GatewayEffect] = []
    var executingEffects = false
    /// Set by tests: `eventEnds` returns the effects it carried out.
    var recordsEffects = false
    var metrics = GatewayMetrics()
    /// Every connection's ping: libwebsockets drops pongs without payload, so it
    /// carries a few ASCII bytes; one ping is in flight at a time, so it needs no
    /// stamp of its own.
    let pingFrame = OutboundFrame(Array("cowatch".utf8), kind: .ping, createdAt: MonotonicInstant(microseconds: 0))

    // Cross-thread state, behind `lock`.
    private let lock = NSLock()
    private var stopRequested = false
    private var boundPort = 0
    private let stopped = DispatchSemaphore(value: 0)
    private var inbox: [ServiceMessage] = []
    /// The cluster's PostgreSQL pieces; nil for a server on its own.
    let clusterLink: ClusterLink?
    /// Service-thread state of the cluster (its relay clients made at start).
    let cluster: ClusterState?
    /// The link to the media server for voice (`Voice/`); nil without one.
    var voice: VoiceBridge?
    var voiceClients: WebSocketClients?
    var voiceLink: ClientConnection?
    var voiceLinkNumber: UInt64 = 0

    /// From any other thread (a link check, the database, a relay): hand a message
    /// to the service thread, which handles it when woken (`serviceWoken`).
    /// After its time source was moved ahead (a test's `SkippableTime`): the
    /// room timers and deadlines that came due meanwhile are handled at once,
    /// then `then` is called (on the service thread).
    public func timeSkipped(then: @escaping @Sendable () -> Void = {}) {
        post(.timeSkipped(then))
    }

    func post(_ message: ServiceMessage) {
        lock.withLock {
            inbox.append(message)
            self.server?.wake()
        }
    }

    /// From a probe's thread: hand the answer to the service thread.
    func mediaCheckFinished(_ id: UInt64, verdict: MediaCheck.Verdict, started: MonotonicInstant, address: String) {
        post(.mediaCheck(id, verdict, started: started, address: address))
    }

    /// `cluster`: this node is one of several sharing a PostgreSQL database
    /// (docs/cluster.md); `store` is then the cluster's store.
    public convenience init(configuration: GatewayConfiguration = GatewayConfiguration(), store: (any RoomStore)? = nil,
                            cluster: ClusterLink? = nil, logger: Logger = Logger(label: "cowatch.gateway"),
                            time: any TimeSource = SystemTime()) {
        self.init(configuration: configuration, store: store, cluster: cluster, clusterSettings: nil, logger: logger, time: time)
    }

    /// `clusterSettings` without `cluster`: a node of a cluster whose effects on
    /// the database and other nodes are only decided, never carried out (tests).
    init(configuration: GatewayConfiguration, store: (any RoomStore)?, cluster: ClusterLink?,
         clusterSettings: PostgresLeases.Settings?, logger: Logger, time: any TimeSource) {
        self.time = time
        eventTime = GatewayState.Now(server: time.now(), monotonic: time.monotonic())
        var configuration = configuration
        configuration.room.announcedLimits = Welcome.Limits(lineBytes: configuration.maximumLineBytes,
                                                            messageBytes: configuration.maximumMessageBytes)
        configuration.room.voice.available = configuration.voice.isConfigured
        self.configuration = configuration
        self.store = store
        self.clusterLink = cluster
        self.logger = logger
        self.parser = LineParser(maximumLineBytes: configuration.maximumLineBytes)
        self.state = GatewayState(settings: GatewayState.Settings(configuration, cluster: cluster != nil || clusterSettings != nil,
                                                                  store: store != nil))
        self.tables = GatewayTables(slices: state.settings.connectionSlices)
        self.cluster = (cluster?.leases.settings ?? clusterSettings).map {
            ClusterState(settings: $0, relayTimeout: MonotonicDuration(configuration.relayTimeout))
        }
        self.web = WebRoot()
        self.securityHeaders = HTTPResponse.securityHeaders(configuration.playerScripts)
        if let directory = web.directory {
            logger.info("browser client", metadata: ["directory": "\(directory)"])
        } else {
            logger.warning("browser client files not found; serving plain pages (set COWATCH_WEB_ROOT)")
        }
    }

    /// Brings back the stored rooms, starts listening and serving on a thread of
    /// its own; returns the bound port.
    @discardableResult
    public func start() throws -> Int {
        // A cluster node loads no rooms at start: each is loaded by the node that
        // takes its lease, when a member comes (Gateway+Cluster.swift).
        let stored = try clusterLink.map { try $0.store.loadShared() } ?? store?.load()
        if let clusterLink {
            cluster?.relays = try WebSocketClients(connectTimeout: .seconds(2), trust: nil)
            clusterLink.store.onFenced = { [weak self] room, epoch in self?.post(.fenced(room, epoch: epoch)) }
            if configuration.clusterSecret == nil {
                logger.error("this cluster node cannot relay: \(Self.cannotRelay)")
            }
            clusterLink.leases.onRenewal = { [weak self] renewal in self?.post(.renewal(renewal)) }
            clusterLink.leases.onOperatorChangeWritten = { [weak self] change in self?.post(.operatorChangeShared(change)) }
            clusterLink.leases.start()
        }
        let started = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var failure: Error?
        let thread = Thread { [self] in
            do {
                let server = try LWSServer(gateway: self)
                lock.withLock {
                    self.server = server
                    boundPort = server.port
                }
                eventBegins()
                if let stored { restore(stored) }
                eventEnds()
                started.signal()
                serve(server)
            } catch {
                failure = error
                started.signal()
                stopped.signal()
            }
        }
        thread.name = "cowatch-service"
        thread.stackSize = 8 << 20
        // Not kept: a running thread keeps itself, and its closure keeps the gateway.
        thread.start()
        started.wait()
        if let failure { throw failure }
        return port
    }

    public var port: Int { lock.withLock { boundPort } }

    /// Graceful shutdown, from any thread: stop accepting, close every member with
    /// 1001, and finish within the configured grace.
    public func stop() {
        // Woken under the lock: the service thread forgets the server under the
        // same lock before destroying it, so a stop never wakes a destroyed context.
        lock.withLock {
            stopRequested = true
            self.server?.wake()
        }
    }

    public func waitUntilStopped() {
        stopped.wait()
        stopped.signal()
    }

    var isStopRequested: Bool { lock.withLock { stopRequested } }

    private func serve(_ server: LWSServer) {
        logger.info("listening", metadata: ["host": "\(configuration.host)", "port": "\(server.port)"])
        eventBegins()
        run(gateway: [.armHousekeeping(after: state.settings.housekeepingInterval)])
        startVoice()
        // A stop asked for while starting found no loop to wake.
        if isStopRequested { beginShutdown() }
        eventEnds()
        while state.phase != .finished {
            if server.serviceOnce() < 0 { break }
        }
        let remaining = connections.count
        cluster?.relays?.shutdown()
        voiceClients?.shutdown()
        eventBegins()
        run(gateway: [.writeAliveMark(eventTime.server)])
        emit(.flushStore)
        eventEnds()
        lock.withLock { self.server = nil }
        server.destroy()
        logger.info("stopped", metadata: ["unclosed": "\(remaining)"])
        stopped.signal()
    }

    /// Called on the service thread whenever it is woken from another thread.
    func serviceWoken() {
        if isStopRequested && state.isServing { beginShutdown() }
        let messages = lock.withLock { () -> [ServiceMessage] in
            defer { inbox.removeAll() }
            return inbox
        }
        for message in messages {
            // Each message is an event of its own: a skipped time, for one, is read after it.
            eventBegins()
            handle(message)
            eventEnds()
        }
    }

    func beginShutdown() {
        logger.info("shutting down", metadata: ["connections": "\(connections.count)"])
        run(gateway: state.stopRequested(at: eventTime.monotonic))
    }

    /// An event begins (a libwebsockets callback, a timer, the start, the end):
    /// the time source is read once, and everything the event decides and
    /// carries out is at that time (`eventTime`). Only measurements of how long
    /// something took read the source again (`wrote`, the connection pass).
    func eventBegins() {
        eventTime = GatewayState.Now(server: time.now(), monotonic: time.monotonic())
    }
}
