import CowatchClient

/// What `cowatch bench` asks of the load generator.
public struct LoadPlan: Sendable {
    /// When a room's controller sends its next command.
    public enum Schedule: Sendable, Equatable {
        /// When every member has the state of the previous command (a closed loop
        /// per room; rooms run concurrently).
        case closed
        /// Every `interval` seconds whatever happened meanwhile (an open loop). With
        /// `staggered`, room i sends at its own instant, i / rooms of an interval
        /// after room 0; otherwise every room sends at the same instant.
        case fixed(interval: Double, staggered: Bool)
    }

    /// The servers (nodes of one cluster, or one server); their hosts and ports
    /// are used, the paths are replaced per room. Members of each room are spread
    /// over them round-robin by number, so member 0, the room's first and its
    /// controller, connects to the first: with the room created there, that node
    /// owns it, and members on the other nodes are relayed to it.
    public var servers: [WebSocketAddress]
    /// How members find their server when there are several.
    public enum Placement: String, Sendable {
        /// Member i of every room on server i mod count: each room owned by the
        /// first server, most members relayed to it.
        case roundRobin = "round-robin"
        /// Every member of room r on server r mod count, as the shipped nginx
        /// upstream places them (it hashes the room's path): each room owned where
        /// all its members are, nothing relayed. One node per core on one machine.
        case byRoom = "by-room"
    }
    public var placement: Placement = .roundRobin
    /// Members of the measured rooms are players (`player=1`) that answer every
    /// `waiting` state with `/ready`, as the page's player does: a `/play` then
    /// brings `waiting`, a round trip through every member, and the `playing`
    /// state that starts the group, which is the one measured. JSON only.
    public var players = false
    /// Local addresses the connections come from, in turn (empty: the kernel's
    /// choice). One local address reaches one server port from at most the
    /// ephemeral port range (about 28,000 ports): 100,000 connections need four
    /// or more, such as 127.0.0.1 to 127.0.0.8 on loopback.
    public var sourceAddresses: [String] = []
    public var rooms: Int
    /// Members per room, named m0, m1, ...; m0 is the room's controller.
    public var members: Int
    /// Measured commands per room, after the warm-up.
    public var rounds: Int
    /// Commands per room sent and waited for before measuring.
    public var warmupRounds: Int
    public var schedule: Schedule
    /// Connections that only connect and stay quiet, in rooms of their own of
    /// `idleRoomSize` members: the server's cost of connections that are there
    /// but take no part.
    public var idleConnections: Int
    public var idleRoomSize: Int
    public var encoding: ClientEncoding
    /// How frames are read (a byte scan unless measuring the decoder).
    public var frameReading: FrameReading = .head
    /// Connections per libwebsockets client context (one service thread each).
    /// Each wake-up of a context polls all its connections, so a context per
    /// room or a few rooms keeps the generator's own cost low.
    public var connectionsPerContext: Int
    /// The same for the idle connections, which only wake for pings.
    public var idleConnectionsPerContext: Int
    /// Connections being opened at once, all contexts together.
    public var connectWindow: Int
    /// New connections per second at most; 0 for no limit. Every arrival is
    /// announced to the whole room, so a big room filled too fast overflows the
    /// server's outboxes.
    public var connectRate: Double
    /// Prefix of the room names, unique per run so that rooms of an earlier run
    /// (kept for their resume grace) are not reused.
    public var roomPrefix: String

    public init(servers: [WebSocketAddress], rooms: Int, members: Int, rounds: Int, warmupRounds: Int,
                schedule: Schedule = .closed, idleConnections: Int = 0, idleRoomSize: Int = 10,
                encoding: ClientEncoding, connectionsPerContext: Int, idleConnectionsPerContext: Int? = nil,
                connectWindow: Int, connectRate: Double, roomPrefix: String) {
        precondition(!servers.isEmpty, "a plan needs a server")
        self.servers = servers
        self.rooms = rooms
        self.members = members
        self.rounds = rounds
        self.warmupRounds = warmupRounds
        self.schedule = schedule
        self.idleConnections = idleConnections
        self.idleRoomSize = max(1, idleRoomSize)
        self.encoding = encoding
        self.connectionsPerContext = max(1, connectionsPerContext)
        self.idleConnectionsPerContext = max(1, idleConnectionsPerContext ?? connectionsPerContext)
        self.connectWindow = connectWindow
        self.connectRate = connectRate
        self.roomPrefix = roomPrefix
    }

    /// Connections of the rooms that take part, without the idle ones.
    public var activeConnections: Int { rooms * members }
    public var connections: Int { activeConnections + idleConnections }
    public var idleRooms: Int { (idleConnections + idleRoomSize - 1) / idleRoomSize }
    public var activeContexts: Int { (activeConnections + connectionsPerContext - 1) / connectionsPerContext }
    public var contexts: Int {
        activeContexts + (idleConnections + idleConnectionsPerContext - 1) / idleConnectionsPerContext
    }

    /// Which of `servers` member `member` of room `room` connects to (see `Placement`).
    public func serverIndex(room: Int, member: Int) -> Int {
        switch placement {
        case .roundRobin: member % servers.count
        case .byRoom: room % servers.count
        }
    }

    /// The local address connection number `connection` comes from, if any.
    public func sourceAddress(connection: Int) -> String? {
        sourceAddresses.isEmpty ? nil : sourceAddresses[connection % sourceAddresses.count]
    }

    /// Whether the report splits members on the owner from relayed ones.
    public var relays: Bool { servers.count > 1 && placement == .roundRobin }

    /// Which context holds member `member` of room `room` (the idle rooms
    /// numbered after the active ones). Room-major, so that a room's members
    /// share a context: a command then wakes the few contexts that hold its room.
    func context(room: Int, member: Int) -> Int {
        guard room >= rooms else { return (room * members + member) / connectionsPerContext }
        return activeContexts + ((room - rooms) * idleRoomSize + member) / idleConnectionsPerContext
    }

    /// What the controller sends: one `/watch` to start the session (paused at 0),
    /// then commands that each change the state, so that each brings exactly one
    /// `state`: with no player in the room `/play` starts at once, and `/pause`
    /// follows a `/play`.
    public static let opening = "/watch https://example.org/bench.mp4 Bench"

    /// The closed loop's commands, in turn.
    public static let cycle = ["/play", "/pause", "/seek +5"]
    /// The fixed schedules' commands, in turn.
    public static let alternation = ["/play", "/pause"]

    /// Commands `range` of the run (warm-up first), in the schedule's order.
    func commands(_ range: Range<Int>) -> [String] {
        let turns = schedule == .closed ? Self.cycle : Self.alternation
        return range.map { turns[$0 % turns.count] }
    }
}
