import CowatchConnection
import CowatchCore
import CowatchStore
import CowatchTime
import SlashCommands

/// The gateway's own decisions as a value, in the shape of the core's `Room`:
/// an event and `now` in, `GatewayAction`s out, carried out in one place
/// (`Gateway.run`, Gateway+Interpreter.swift, and the executor). It reads no clock and touches
/// no socket, store, room or log; what it must know about rooms comes with the
/// event. Its rules are tested as sentences on a manual clock
/// (Tests/CowatchGatewayTests/GatewayStateTests.swift).
///
/// What it decides:
/// - the front door: which sockets are taken (`SocketLimits`), which WebSocket
///   upgrades are let in (shutting down, room names, the hosts and origins
///   served, the operator's bans and drain, rooms created per address,
///   connections per address), and each connection's number;
/// - rooms: how many (`max-rooms`, an unused room making way), and how a
///   connection its room refuses is closed;
/// - the work the server does for strangers: places for link checks and
///   subtitle fetches, per address and in all (`WorkPlaces`); wrong admin
///   tokens per address (`AdminTokenFailures`);
/// - the rooms' timers (`TimerQueue`), the housekeeping's cadence (the store's
///   sign of life, the chat total, each connection's deadlines and pings),
///   and the shutdown, from the request to the last connection or the grace.
struct GatewayState {
    struct Settings {
        var maximumConnectionsPerAddress: Int
        var maximumRooms: Int
        var roomCreation: GatewayConfiguration.RoomCreation
        var roomCreationRate: Int
        var allowedOrigins: [String]
        var hosts: HostAllowlist
        var shutdownGrace: MonotonicDuration
        var linkChecks: WorkPlaces.Limits
        var subtitleFetches: WorkPlaces.Limits
        /// A node of a cluster: rooms it does not hold may exist on another node,
        /// and a shutdown hands its rooms over.
        var cluster: Bool
        /// The peers whose word on a client's address is taken.
        var trustedProxies: Set<String> = []
        /// The cluster's secret, which a node's shared relay link must prove
        /// (`RelayProof`); nil: no link is taken.
        var clusterSecret: String?
        /// Where rooms outlive a restart: the store is told the server is alive.
        var store: Bool
        /// How often the store is told the server is alive: a restart after a
        /// longer downtime brings playing rooms back paused (`maximum-downtime`).
        var aliveInterval = MonotonicDuration.seconds(5)
        /// How often all rooms' chat is added up (`chat-total-bytes`): often enough
        /// that it is never far over, rarely enough that adding up costs nothing.
        var chatBudgetInterval = MonotonicDuration.seconds(5)
        /// How often housekeeping runs. Each pass looks at one of
        /// `connectionSlices` slices of the connections, so every connection's
        /// deadlines and pings are looked at every 250 ms, and the loop is never
        /// held for a pass over all of them: at 19,500 connections that pass took
        /// 4 to 5 ms, and sent a quarter second's pings (about 490) in one burst
        /// whose answers came back together, which was most of the commands'
        /// p99 (docs/benchmarks.md, "One node at the descriptor limit"). While
        /// shutting down every pass looks at every connection, to finish on time.
        var housekeepingInterval = MonotonicDuration.milliseconds(50)
        var connectionSlices = 5
        /// How often the cluster's leases, links and waiting members are looked at.
        var clusterInterval = MonotonicDuration.milliseconds(250)
        var shutdownHousekeepingInterval = MonotonicDuration.milliseconds(50)

        init(_ configuration: GatewayConfiguration, cluster: Bool, store: Bool) {
            maximumConnectionsPerAddress = configuration.maximumConnectionsPerAddress
            maximumRooms = configuration.maximumRooms
            roomCreation = configuration.roomCreation
            roomCreationRate = configuration.roomCreationRate
            allowedOrigins = configuration.allowedOrigins
            let originHosts = configuration.allowedOrigins.compactMap { origin in
                origin.range(of: "://").flatMap { HostAllowlist.hostPart(String(origin[$0.upperBound...])) }
            }
            hosts = HostAllowlist(names: configuration.allowedHosts + originHosts)
            shutdownGrace = MonotonicDuration(configuration.shutdownGrace)
            let places = WorkPlaces.Limits(perAddress: configuration.mediaCheck.maximumPerAddress,
                                           total: configuration.mediaCheck.maximumConcurrent)
            linkChecks = places
            subtitleFetches = places
            self.cluster = cluster
            self.store = store
            trustedProxies = Set(configuration.trustedProxies)
            clusterSecret = configuration.clusterSecret
        }
    }

    /// Both clocks at one event: server time for what is kept across restarts
    /// (an operator's ban) and for the rooms' timers, monotonic time for the rest.
    struct Now {
        var server: ServerInstant
        var monotonic: MonotonicInstant
    }

    enum Phase: Equatable {
        case serving
        /// Every connection was asked to close; the server finishes when the last
        /// one is gone or at `deadline`, whichever comes first.
        case stopping(deadline: MonotonicInstant)
        case finished
    }

    let settings: Settings
    private(set) var phase = Phase.serving
    private(set) var sockets: SocketLimits
    /// Open WebSocket connections, in all and per client address.
    private(set) var openConnections = 0
    private(set) var connectionsPerAddress: [String: Int] = [:]
    private(set) var roomCreations: RoomCreationLimit
    /// What the operator decided (the admin API, Gateway+Admin.swift).
    private(set) var operatorState = OperatorState()
    /// A cluster node's changes to the cluster's operator state that the database
    /// has not confirmed yet, oldest first.
    private(set) var unsharedOperatorChanges: [SharedOperatorChange] = []
    private(set) var adminTokenFailures = AdminTokenFailures()
    private(set) var nextConnectionID: UInt64 = 1
    /// The nonces of relay links' proofs taken lately: none is taken twice.
    private(set) var relayNonces = RelayProof.Seen()
    /// Upgrades let in whose connection is not open yet, by connection number.
    private var upgrades: [UInt64: UpgradeRequest] = [:]
    private(set) var linkChecks: WorkPlaces
    private(set) var subtitleFetches: WorkPlaces
    private(set) var timers = TimerQueue()
    private var aliveWritten: MonotonicInstant?
    private var chatBudgetChecked: MonotonicInstant?
    private var clusterChecked: MonotonicInstant?
    /// Housekeeping passes so far: which slice of the connections is next.
    private var passes = 0

    init(settings: Settings) {
        self.settings = settings
        sockets = SocketLimits(perAddress: settings.maximumConnectionsPerAddress, total: 1024)
        roomCreations = RoomCreationLimit(perMinute: settings.roomCreationRate)
        linkChecks = WorkPlaces(settings.linkChecks)
        subtitleFetches = WorkPlaces(settings.subtitleFetches)
    }

    var isServing: Bool { phase == .serving }

    // MARK: Sockets, before a byte is read

    /// Listening, with room for `sockets` sockets under the descriptor limit.
    mutating func listening(sockets total: Int) {
        sockets = SocketLimits(perAddress: settings.maximumConnectionsPerAddress, total: total)
    }

    /// A socket from `address` is about to be accepted.
    func socketOffered(from address: String, trusted: Bool) -> GatewayAction {
        guard isServing else { return .refuseSocket(nil) }
        if let refusal = sockets.refusal(for: address, trusted: trusted) { return .refuseSocket(refusal) }
        return .acceptSocket
    }

    mutating func socketOpened(from address: String) {
        sockets.opened(address)
    }

    mutating func socketClosed(from address: String) {
        sockets.closed(address)
    }

    // MARK: WebSocket upgrades and connections

    /// Whether an upgrade may go ahead: `.admitUpgrade`, or `.refuseUpgrade` with
    /// the status and words. `roomExists`: its room is held here.
    mutating func upgradeOffered(_ request: UpgradeRequest, roomExists: Bool, at now: Now) -> GatewayAction {
        guard isServing else { return .refuseUpgrade(.init(status: 503, body: "the server is shutting down\n")) }
        if request.room == nil && !request.echo {
            return .refuseUpgrade(.init(status: 400, body: "a room name is 1 to 64 characters of A-Z a-z 0-9 . _ -\n"))
        }
        if let host = request.hostHeader, !settings.hosts.allows(host) {
            return .refuseUpgrade(.init(status: 421, body: "this server does not answer for \(host.prefix(100)); "
                + "its operator lists the names it serves in allowed-hosts\n", counted: "host"))
        }
        if let origin = request.origin, !Self.originAllowed(origin, host: request.hostHeader, allowed: settings.allowedOrigins) {
            return .refuseUpgrade(.init(status: 403, body: "pages on \(origin.prefix(100)) may not open connections to this server\n",
                                        counted: "origin"))
        }
        if request.relay {
            return relayLinkOffered(request, roomExists: roomExists, now: now.server)
        }
        if let refusal = operatorRefusal(request, roomExists: roomExists, now: now.server) {
            return .refuseUpgrade(refusal)
        }
        // A node of a cluster does not know whether a room exists on another node:
        // the owner that creates it asks (`join`).
        if !settings.cluster, request.room != nil, !roomExists,
           let refusal = roomCreationRefusal(address: request.address, token: request.create, now: now.monotonic) {
            return .refuseUpgrade(.init(status: 429, body: refusal.message + "\n", counted: "room-creation-rate"))
        }
        if connectionsPerAddress[request.address, default: 0] >= settings.maximumConnectionsPerAddress {
            return .refuseUpgrade(.init(status: 429, body: "too many connections from your address (at most "
                + "\(settings.maximumConnectionsPerAddress))\n", counted: "per-address"))
        }
        return .admitUpgrade
    }

    /// Another node's shared link for a room (`RelayWire`): only from a node of
    /// this cluster, which proves the cluster's secret (`RelayProof`; its members'
    /// addresses are taken on its word), and only for a room this node serves; its
    /// members are judged one by one as they join on it.
    private mutating func relayLinkOffered(_ request: UpgradeRequest, roomExists: Bool, now: ServerInstant) -> GatewayAction {
        guard settings.cluster, let secret = settings.clusterSecret, let room = request.room else {
            return .refuseUpgrade(.init(status: 403, body: "relay links are for the nodes of this server's cluster, "
                                        + "which share its cluster-secret-file\n", counted: "relay-link", logged: true))
        }
        if case .failure(let refusal) = RelayProof.check(request.relayProof, secret: secret, room: room, now: now,
                                                          seen: &relayNonces) {
            return .refuseUpgrade(.init(status: 403, body: "relay link refused: \(refusal.words)\n",
                                        counted: "relay-link-proof", logged: true))
        }
        guard roomExists else {
            return .refuseUpgrade(.init(status: 503, body: "this node does not serve that room\n", counted: "relay-link-elsewhere"))
        }
        return .admitUpgrade
    }

    // MARK: - The operator's requests (the admin API) and their saved state

    /// `address` may not connect until `until` (nil: until lifted).
    mutating func operatorBans(_ address: String, until: ServerInstant?) -> [GatewayAction] {
        changeOperatorState(.ban(address: address, untilMilliseconds: until?.milliseconds))
    }

    /// The ban on `address` is lifted; nothing when there was none.
    mutating func operatorLifts(_ address: String) -> [GatewayAction] {
        operatorState.bannedAddresses[address] != nil ? changeOperatorState(.lift(address: address)) : []
    }

    /// This server (in a cluster: this node) takes no new rooms, or takes them again.
    mutating func operatorDrains(_ draining: Bool) -> [GatewayAction] {
        operatorState.draining = draining
        return [.saveOperatorState]
    }

    /// A room-creation token, kept as its digest, good for `uses` rooms.
    mutating func operatorIssuesCreationToken(digest: String, uses: Int) -> [GatewayAction] {
        changeOperatorState(.creationToken(digest: digest, uses: uses))
    }

    /// A change to what is the cluster's in a cluster (bans, creation tokens):
    /// made here at once, and shared as that one change (never the whole state
    /// written back over other nodes' changes), kept over the shared state read
    /// meanwhile until the database has it. A server alone saves its whole state.
    private mutating func changeOperatorState(_ change: SharedOperatorChange) -> [GatewayAction] {
        operatorState.apply(change)
        guard settings.cluster else { return [.saveOperatorState] }
        unsharedOperatorChanges.append(change)
        return [.shareOperatorChange(change)]
    }

    /// The database has one of this node's changes: the shared state read from now
    /// on holds it.
    mutating func operatorChangeShared(_ change: SharedOperatorChange) {
        if let index = unsharedOperatorChanges.firstIndex(of: change) { unsharedOperatorChanges.remove(at: index) }
    }

    /// The cluster's operator state as a heartbeat read it (every node's changes),
    /// with this node's own not yet written kept over it; returns the addresses
    /// banned now that were not before, whose open connections must close.
    mutating func operatorStateShared(_ shared: SharedOperatorState, at now: ServerInstant) -> [String] {
        let before = Set(operatorState.bannedAddresses.keys)
        // A ban that has ended stays a row until lifted; it bans nobody.
        operatorState.bannedAddresses = shared.bans.filter { $0.value.map { $0 > now.milliseconds } ?? true }
            .mapValues { $0.map(ServerInstant.init(milliseconds:)) }
        operatorState.creationTokens = shared.creationTokens
        for change in unsharedOperatorChanges { operatorState.apply(change) }
        return operatorState.bannedAddresses.keys.filter { !before.contains($0) }.sorted()
    }

    /// What the operator decided before a restart, read back from the store.
    mutating func operatorStateRestored(_ saved: OperatorState) {
        operatorState = saved
    }

    /// Whether the operator banned `address` (a relayed member's, judged as it
    /// joins on a link, as a member's own upgrade is).
    mutating func operatorBanned(_ address: String, at now: ServerInstant) -> Bool {
        guard let until = operatorState.bannedAddresses[address] else { return false }
        if let until, now >= until {
            operatorState.bannedAddresses[address] = nil
            return false
        }
        return true
    }

    /// The operator's refusals: a banned address (until its ban ends), a new room
    /// while draining, a new room without a creation token under
    /// `room-creation token`.
    private mutating func operatorRefusal(_ request: UpgradeRequest, roomExists: Bool, now: ServerInstant) -> UpgradeRefusal? {
        if operatorBanned(request.address, at: now) {
            return UpgradeRefusal(status: 403, body: "your address may not connect to this server\n",
                                  counted: "operator-ban", logged: true)
        }
        guard request.room != nil, !roomExists else { return nil }
        if operatorState.draining {
            return UpgradeRefusal(status: 503, body: "this server is not taking new rooms right now; existing rooms are open\n",
                                  counted: "draining", logged: true)
        }
        if settings.roomCreation == .token && !operatorState.creationTokenValid(request.create) {
            return UpgradeRefusal(status: 403, body: "creating a room on this server needs a creation token from its operator (create=)\n",
                                  counted: "creation-token", logged: true)
        }
        return nil
    }

    /// An upgrade was let in: its connection's number, its request kept until
    /// the connection is open.
    mutating func upgradeAdmitted(_ request: UpgradeRequest) -> UInt64 {
        let id = nextConnectionID
        nextConnectionID += 1
        upgrades[id] = request
        return id
    }

    /// The connection of an admitted upgrade is open: its request.
    mutating func connectionOpened(_ id: UInt64) -> UpgradeRequest? {
        let request = upgrades.removeValue(forKey: id)
        let address = request?.address ?? "unknown"
        connectionsPerAddress[address, default: 0] += 1
        openConnections += 1
        return request
    }

    /// A connection is gone (`address` nil: it never opened); while shutting
    /// down, the last one finishes the server.
    mutating func connectionClosed(_ id: UInt64, address: String?, at now: MonotonicInstant) -> [GatewayAction] {
        upgrades[id] = nil
        guard let address else { return [] }
        let open = connectionsPerAddress[address, default: 1] - 1
        connectionsPerAddress[address] = open > 0 ? open : nil
        openConnections -= 1
        return finishIfDone(now)
    }

    // MARK: The admin API

    /// A request to the admin API from `address`, with a right token or not.
    mutating func adminRequested(from address: String, rightToken: Bool, at now: ServerInstant) -> AdminGate {
        if adminTokenFailures.refuses(address, at: now) { return .tooManyWrongTokens }
        guard rightToken else {
            adminTokenFailures.failed(address, at: now)
            return .wrongToken
        }
        adminTokenFailures.succeeded(address)
        return .open
    }

    enum AdminGate: Equatable {
        case open
        case wrongToken
        /// Refused unheard: too many wrong tokens from the address this minute.
        case tooManyWrongTokens
    }

    // MARK: Rooms created

    /// Why a room may not be created for `address` now: it created its share of
    /// rooms this minute (`room-creation-rate`). An operator's creation token passes.
    func roomCreationRefusal(address: String, token: String?, now: MonotonicInstant) -> CommandError? {
        guard !operatorState.creationTokenValid(token), let wait = roomCreations.wait(for: address, now: now) else { return nil }
        let seconds = Int(wait.seconds.rounded(.up))
        return CommandError(.rateLimited, command: nil,
                            message: "your address created \(settings.roomCreationRate) rooms in the last minute; "
                                + "create another in \(seconds) s, or join an existing room")
    }

    /// Whether a room new here may be made while `held` rooms are: freely under
    /// `max-rooms`; at it, in the place of an empty room nobody ever used
    /// (nothing shared, said or set in it; the longest empty first), since rooms
    /// people used are kept to their expiry; else not.
    func roomWanted(held: Int, unused: [(name: RoomName, emptySince: ServerInstant?)]) -> RoomPlace {
        guard held >= settings.maximumRooms else { return .free }
        let since = { (room: (name: RoomName, emptySince: ServerInstant?)) in room.emptySince?.milliseconds ?? 0 }
        guard let oldest = unused.min(by: { (since($0), $0.name.rawValue) < (since($1), $1.name.rawValue) }) else {
            return .full(CommandError(.roomFull, command: nil,
                                      message: "this server has reached its limit of \(settings.maximumRooms) rooms"))
        }
        return .inPlaceOf(oldest.name)
    }

    enum RoomPlace: Equatable {
        case free
        /// There is room once this unused room is given up.
        case inPlaceOf(RoomName)
        case full(CommandError)
    }

    /// A room was created for `address`: a creation token's use, or one of the
    /// address's rooms this minute.
    mutating func roomCreated(by address: String, token: String?, at now: MonotonicInstant) -> [GatewayAction] {
        guard operatorState.creationTokenValid(token) else {
            roomCreations.record(address, now: now)
            return []
        }
        guard let token else { return [] }
        return changeOperatorState(.creationTokenUsed(digest: SecretDigest.hex(token)))
    }

    // MARK: Work done for strangers

    /// A link check for a line from `address`: a place, or why not.
    mutating func linkCheckOffered(from address: String) -> WorkPlaces.Answer {
        linkChecks.take(for: address)
    }

    mutating func linkCheckFinished(for address: String) {
        linkChecks.give(back: address)
    }

    /// A subtitle fetch for a page at `address`: a place, or why not.
    mutating func subtitleFetchOffered(from address: String) -> WorkPlaces.Answer {
        subtitleFetches.take(for: address)
    }

    mutating func subtitleFetchFinished(for address: String) {
        subtitleFetches.give(back: address)
    }

    // MARK: The rooms' timers

    mutating func schedule(_ timer: RoomTimer, in room: RoomName, at instant: ServerInstant) -> GatewayAction {
        timers.schedule(timer, in: room, at: instant)
        return .armRoomTimers
    }

    mutating func cancel(_ timer: RoomTimer, in room: RoomName) {
        timers.cancel(timer, in: room)
    }

    /// A room is gone: its timers with it.
    mutating func roomForgotten(_ room: RoomName) {
        timers.cancelAll(in: room)
    }

    /// The timers due at `now`, earliest first, then the next one armed (once
    /// they have run: what they schedule may come due sooner).
    mutating func timersDue(at now: ServerInstant) -> [GatewayAction] {
        timers.popDue(now: now).map { GatewayAction.fireRoomTimer($0.room, $0.timer, at: now) } + [.armRoomTimers]
    }

    /// When the earliest timer is due (nil: none is armed).
    mutating func nextTimerDue() -> ServerInstant? {
        timers.nextDue()
    }

    // MARK: Housekeeping and shutdown

    /// The housekeeping pass: the store's sign of life and the chat total when
    /// due, every connection's deadlines and pings, the cluster's leases, the
    /// shutdown's end; then the next pass.
    mutating func housekeeping(at now: Now) -> [GatewayAction] {
        var actions: [GatewayAction] = []
        defer { passes &+= 1 }
        if settings.store, aliveWritten.map({ now.monotonic - $0 >= settings.aliveInterval }) ?? true {
            aliveWritten = now.monotonic
            actions.append(.writeAliveMark(now.server))
        }
        if chatBudgetChecked.map({ now.monotonic - $0 >= settings.chatBudgetInterval }) ?? true {
            chatBudgetChecked = now.monotonic
            actions.append(.keepChatWithinBudget)
        }
        if isServing {
            let slices = max(1, settings.connectionSlices)
            actions.append(.tickConnections(now.monotonic, slice: passes % slices, of: slices))
        } else {
            actions.append(.tickConnections(now.monotonic, slice: 0, of: 1))
        }
        if settings.cluster, clusterChecked.map({ now.monotonic - $0 >= settings.clusterInterval }) ?? true {
            clusterChecked = now.monotonic
            actions.append(.clusterHousekeeping)
        }
        actions += finishIfDone(now.monotonic)
        if phase != .finished { actions.append(.armHousekeeping(after: nextHousekeeping)) }
        return actions
    }

    private var nextHousekeeping: MonotonicDuration {
        isServing ? settings.housekeepingInterval : settings.shutdownHousekeepingInterval
    }

    /// A graceful stop: every connection is asked to close (in a cluster, after
    /// the rooms are handed over, to come back at once to another node).
    mutating func stopRequested(at now: MonotonicInstant) -> [GatewayAction] {
        guard isServing else { return [] }
        phase = .stopping(deadline: now + settings.shutdownGrace)
        var actions: [GatewayAction] = settings.cluster
            ? [.handOverRooms, .closeEveryConnection(code: 4010, reason: "this node is leaving; reconnect now")]
            : [.closeEveryConnection(code: 1001, reason: "server shutting down")]
        actions += finishIfDone(now)
        if phase != .finished { actions.append(.armHousekeeping(after: nextHousekeeping)) }
        return actions
    }

    private mutating func finishIfDone(_ now: MonotonicInstant) -> [GatewayAction] {
        guard case .stopping(let deadline) = phase, openConnections == 0 || now >= deadline else { return [] }
        phase = .finished
        return [.finish]
    }

    // MARK: Pure rules

    /// The close code of a connection refused by its room (docs/protocol.md,
    /// "Close codes"): 4003 for a ban or a kick's cooldown, 4004 for a locked
    /// room, 4005 for a password asked, wrong, or tried too often, 4006 for a bot
    /// token that is not valid, 1008 for a full room or server.
    static func closeCode(refusing code: ErrorCode) -> UInt16 {
        switch code {
        case .banned: 4003
        case .locked: 4004
        case .passwordRequired, .wrongPassword, .tooManyAttempts: 4005
        case .badToken: 4006
        case .unavailable: 4011
        default: 1008
        }
    }

    /// A browser's upgrade is let in from a page of the server itself (the
    /// origin's host and port are the `Host` the browser asked for) or of an
    /// allowed origin, so that another site cannot open connections in its
    /// visitors' names (docs/security.md).
    static func originAllowed(_ origin: String, host: String?, allowed: [String]) -> Bool {
        let lower = origin.lowercased()
        if allowed.contains(where: { $0.lowercased() == lower }) { return true }
        guard let host, let schemeEnd = lower.range(of: "://") else { return false }
        return lower[schemeEnd.upperBound...] == host.lowercased()
    }
}

/// An upgrade refused: its HTTP status and words, the `cowatch_refused_connections_total`
/// reason it counts under (nil: not counted), and whether the operator's log hears of it.
struct UpgradeRefusal: Equatable {
    var status: UInt32
    var body: String
    var counted: String? = nil
    var logged = false
}

/// What the gateway's decisions (`GatewayState`) ask to be done.
enum GatewayAction: Equatable {
    /// Answers to a socket about to be accepted; a refusal without a reason
    /// (shutting down) closes it unanswered.
    case acceptSocket
    case refuseSocket(SocketLimits.Refusal?)
    /// Answers to a WebSocket upgrade.
    case admitUpgrade
    case refuseUpgrade(UpgradeRefusal)
    /// The operator's decisions changed: keep them in the store (in a cluster,
    /// this node's own: its drain).
    case saveOperatorState
    /// A cluster node's change to the cluster's operator state: write it to the
    /// shared database, for every node to read.
    case shareOperatorChange(SharedOperatorChange)
    /// A room nobody ever used goes, with what the store kept of it, to make
    /// room for a new one under `max-rooms`.
    case giveUpUnusedRoom(RoomName)
    case fireRoomTimer(RoomName, RoomTimer, at: ServerInstant)
    /// The service loop's timer for the rooms is set to the earliest due then
    /// (`nextTimerDue`), or cancelled when none is.
    case armRoomTimers
    case armHousekeeping(after: MonotonicDuration)
    /// The store hears that the server was alive at this instant.
    case writeAliveMark(ServerInstant)
    case keepChatWithinBudget
    /// Every connection's deadlines and pings, at this instant.
    /// Every connection's deadlines and pings, for the connections whose id is
    /// `slice` modulo `of` (all of them when `of` is 1).
    case tickConnections(MonotonicInstant, slice: Int, of: Int)
    case clusterHousekeeping
    case handOverRooms
    case closeEveryConnection(code: UInt16, reason: String)
    /// The service loop ends.
    case finish
}
