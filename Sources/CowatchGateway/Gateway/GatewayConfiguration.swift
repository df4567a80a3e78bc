import CowatchConnection
import CowatchCore
import CowatchTime

/// Everything the server can be told, with the defaults `cowatch serve` uses.
/// Every limit is explicit: message size, rooms, members, connections per
/// address, command rate, outbox length.
public struct GatewayConfiguration: Sendable {
    /// Address to listen on; `127.0.0.1` keeps a development server private.
    public var host: String
    /// 0 lets the system choose (tests); the bound port is reported by `start()`.
    public var port: Int
    /// Largest client message, in bytes; larger closes with 1009.
    public var maximumMessageBytes: Int
    /// Longest line inside a message, in bytes; longer gets `too-long`.
    public var maximumLineBytes: Int
    public var maximumRooms: Int
    /// Open connections from one IP address, of every kind: sockets as they are
    /// accepted (where a trusted proxy's count toward `maximumConnections`
    /// only), and WebSocket members by their client's address.
    public var maximumConnectionsPerAddress: Int
    /// Open connections of every kind in all (plain HTTP included); kept under
    /// the process's descriptor limit less `SocketLimits.reservedDescriptors`.
    public var maximumConnections: Int = GatewayConfiguration.defaultMaximumConnections
    public static let defaultMaximumConnections = 50_000
    /// Seconds a request may take to arrive, and a plain HTTP connection may sit
    /// idle between requests, before it is closed.
    public var httpRequestTimeout: Duration = .seconds(10)
    /// Names this server answers for in `Host`, besides addresses, `localhost` and
    /// the hosts of `allowedOrigins` (`HostAllowlist`); `*.example.org` takes the
    /// names under it, `*` any name.
    public var allowedHosts: [String] = []
    /// Commands (lines) each connection may send per second, on average...
    public var commandsPerSecond: Double
    /// ...and in a burst.
    public var commandBurst: Double
    /// Lines refused for rate, after the `rate-limited` error, before the
    /// connection is closed with 1008 (the grace a flood gets).
    public var rateLimitGrace: Int
    /// Frames waiting for one slow connection; past this it is sent the latest state
    /// instead of the backlog.
    public var outboxLimit: Int
    /// Frames queued for one connection at which the server stops reading from it
    /// until it has taken some: its commands would only add to what it leaves unread.
    public var readPauseBacklog: Int
    /// A connection whose outbox stays over the limit this long is closed (1008);
    /// also how long a closing connection has to take what was queued for it
    /// before it is dropped without a close frame.
    public var stuckTimeout: Duration
    /// How long the server waits for the peer's close frame after sending its own.
    public var closeReplyTimeout: Duration
    /// Bytes a closing peer may still send (read and discarded) before its socket
    /// is closed without waiting for its close frame.
    public var closingReadLimitBytes: Int
    /// How often each connection is pinged; the round trips set the lead of starts.
    public var pingInterval: Duration
    /// A connection silent for this long (no pong, no message) is dropped.
    public var idleTimeout: Duration
    /// Longest wait for members to take their close frames at shutdown.
    public var shutdownGrace: Duration
    /// Serves `/echo`, a plain WebSocket echo, for the conformance suite only.
    public var echoEndpoint: Bool
    /// Offers permessage-deflate. Off by default: events are small, and compressing
    /// per connection would multiply a broadcast's CPU and memory by the members.
    public var permessageDeflate: Bool
    /// A room that was playing when the server stopped comes back paused if the
    /// server was down longer than this; otherwise it plays on from its anchor.
    public var maximumDowntime: Duration
    /// Limits and timings of each room.
    public var room: RoomConfiguration
    /// Threads that share a big flush's socket writes with the service thread
    /// (`SendCrew`); 0 writes every socket from the service thread alone, nil
    /// chooses by the machine's cores (`SendThreads.automatic`). On one thread a
    /// broadcast reaches its last member after one kernel send per member in
    /// turn; shared, after a share of them.
    public var sendThreads: Int?
    /// Writes in one flush from which they are shared with the send threads:
    /// below it, waking another thread costs more than it saves.
    public var sendThreadsFrom: Int = 64
    /// Longest an event's writes wait for the other events of the same turn of
    /// the event loop, to leave together with theirs (`LWSServer.eventEnded`);
    /// zero makes each event's writes at once.
    public var flushDelay: Duration = .milliseconds(1)
    /// Web origins (`https://watch.example.org`) whose pages may open connections,
    /// besides the server's own host; a browser upgrade from any other is refused
    /// with 403. Clients that send no `Origin` (terminals, bots) are not browsers
    /// and are let through.
    public var allowedOrigins: [String] = []
    /// Addresses of proxies (nginx) whose `X-Forwarded-For` names the client: for
    /// connections from them, the address limits and bans use the client's.
    public var trustedProxies: [String] = []
    /// The secret by which this server knows the members' connections of its own
    /// fronts (Syncplay's port, `SyncplayFront`), which come from loopback: their
    /// `X-Forwarded-For` names the person, and loopback is not held to the limit
    /// of sockets per address (the front keeps its own per person's address).
    /// Nil: no front runs.
    public var frontSecret: String?
    /// More of `/metrics`, from the fronts beside the gateway (Syncplay's
    /// port): Prometheus text, read on the service thread.
    public var moreMetrics: (@Sendable () -> String)?
    /// The cluster's shared secret (`cluster-secret-file`, the same on every
    /// node): a node proves it with each shared relay link it opens, and takes a
    /// link only with that proof (`RelayProof`). Nil: this node opens and takes
    /// no links.
    public var clusterSecret: String?
    /// The node's media server for voice (docs/voice.md); unset: no voice.
    public var voice = VoiceConfiguration()
    /// The operator's token for the admin API (`/admin/...`); nil: the API is off.
    public var adminToken: String?
    /// Who may create a room: anyone, or holders of a creation token the operator
    /// issued through the admin API (`create=`).
    public var roomCreation: RoomCreation = .open
    /// Rooms one address may create in a minute (0: no limit); holders of an
    /// operator's creation token (`create=`) are not counted.
    public var roomCreationRate: Int = 20
    /// The most chat bytes all rooms together keep in memory for newcomers; past
    /// it the oldest lines of the least recently active rooms are dropped.
    public var chatTotalBytes: Int = 64 << 20
    /// Whether and how shared links are looked at before a room sees them (off
    /// here; `cowatch serve` turns it on).
    public var mediaCheck = MediaCheck.Settings()
    /// Lines one connection may have waiting while a link it shared is checked,
    /// or, in a cluster, while its room is placed or its node reached; more are
    /// refused with an error (`Route.swift`).
    public var maximumHeldLines = 32
    /// Frames waiting for another node's shared relay link (it carries many
    /// members' replies besides the room's broadcasts); past this the link is
    /// closed and its members reconnect for the room's state.
    public var relayOutboxLimit = 65_536
    /// Seconds a node waits to hear from a room's owner on its shared link
    /// (anything, or the answer to its ping, sent after a quarter of this)
    /// before it gives the link up and tells its members there to reconnect.
    public var relayTimeout: Duration = .seconds(10)
    /// Where the page loads the players of provider links from; the page's
    /// Content-Security-Policy allows exactly these origins (PlayerScripts).
    public var playerScripts = PlayerScripts()

    public enum RoomCreation: String, Sendable, CaseIterable {
        case open, token
    }

    public init(
        host: String = "127.0.0.1",
        port: Int = 7480,
        maximumMessageBytes: Int = 8 * 1024,
        maximumLineBytes: Int = 4 * 1024,
        maximumRooms: Int = 10_000,
        maximumConnectionsPerAddress: Int = 64,
        commandsPerSecond: Double = 20,
        commandBurst: Double = 40,
        rateLimitGrace: Int = 20,
        outboxLimit: Int = 256,
        readPauseBacklog: Int = 64,
        stuckTimeout: Duration = .seconds(10),
        closeReplyTimeout: Duration = .seconds(5),
        closingReadLimitBytes: Int = 1 << 20,
        pingInterval: Duration = .seconds(10),
        idleTimeout: Duration = .seconds(35),
        shutdownGrace: Duration = .seconds(3),
        echoEndpoint: Bool = false,
        permessageDeflate: Bool = false,
        maximumDowntime: Duration = .seconds(600),
        room: RoomConfiguration = RoomConfiguration()
    ) {
        self.host = host
        self.port = port
        self.maximumMessageBytes = maximumMessageBytes
        self.maximumLineBytes = maximumLineBytes
        self.maximumRooms = maximumRooms
        self.maximumConnectionsPerAddress = maximumConnectionsPerAddress
        self.commandsPerSecond = commandsPerSecond
        self.commandBurst = commandBurst
        self.rateLimitGrace = rateLimitGrace
        self.outboxLimit = outboxLimit
        self.readPauseBacklog = readPauseBacklog
        self.stuckTimeout = stuckTimeout
        self.closeReplyTimeout = closeReplyTimeout
        self.closingReadLimitBytes = closingReadLimitBytes
        self.pingInterval = pingInterval
        self.idleTimeout = idleTimeout
        self.shutdownGrace = shutdownGrace
        self.echoEndpoint = echoEndpoint
        self.permessageDeflate = permessageDeflate
        self.maximumDowntime = maximumDowntime
        self.room = room
    }

    /// The limits every connection's state machine keeps.
    var connectionLimits: ConnectionLimits {
        ConnectionLimits(
            commandsPerSecond: commandsPerSecond, commandBurst: commandBurst, rateLimitGrace: rateLimitGrace,
            outboxLimit: outboxLimit, readPauseBacklog: readPauseBacklog,
            stuckTimeout: MonotonicDuration(stuckTimeout), flushTimeout: MonotonicDuration(stuckTimeout),
            closeReplyTimeout: MonotonicDuration(closeReplyTimeout),
            pingInterval: MonotonicDuration(pingInterval), idleTimeout: MonotonicDuration(idleTimeout),
            closingReadLimit: closingReadLimitBytes)
    }
}

extension Duration {
    /// The configuration's lengths of time as the clocks and libraries below take them.
    var asSeconds: Double {
        let (seconds, attoseconds) = components
        return Double(seconds) + Double(attoseconds) / 1e18
    }
}
