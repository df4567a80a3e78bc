import CowatchClient
import CowatchConnection
import CowatchCore

/// The gateway's tables: its rooms, its connections, who sits where, where each
/// connection's lines go and what they hold, the members other nodes relay here
/// and their links, this node's links to other owners, and the timers of held
/// rooms. Every write to them is in this file: their fields are
/// `fileprivate(set)`, so the compiler keeps one writer, and the event handlers
/// change them only through the named changes below.
///
/// A change is applied at once, because the handler that makes it reads the
/// tables it changed (a room kept, then joined). What reaches the world (frames,
/// closes, the store, the leases, relay links, probes and fetches) is not done
/// here but decided as a `GatewayEffect` and carried out at the event's edge
/// (`Gateway+Executor.swift`).
final class GatewayTables {
    fileprivate(set) var rooms: [RoomName: RoomEntry] = [:]
    fileprivate(set) var connections: [UInt64: Connection] = [:]
    /// The same connections by `id % slices`, for housekeeping passes that each
    /// look at one slice (`GatewayState.Settings.connectionSlices`).
    fileprivate(set) var connectionSlices: [[UInt64: Connection]]
    /// Members other nodes relay here on their shared links, by connection id
    /// (`Gateway+RelayedMembers.swift`); numbered apart from sockets' connections.
    fileprivate(set) var carried: [UInt64: Connection] = [:]
    fileprivate(set) var nextCarriedID: UInt64 = 1 << 62
    /// Peers that sent `X-Forwarded-For` without being trusted proxies, warned about once.
    fileprivate(set) var untrustedForwarders: Set<String> = []
    /// In a cluster, this node's client connections of its shared links to rooms
    /// other nodes own (`RelayLinks`).
    fileprivate(set) var upstreams: [RelayLinks.LinkID: ClientConnection] = [:]
    /// Timers of held rooms that came due, fired when the room goes on.
    fileprivate(set) var heldTimers: [RoomName: [RoomTimer]] = [:]

    init(slices: Int) {
        connectionSlices = Array(repeating: [:], count: max(1, slices))
    }

    private func slice(of id: UInt64) -> Int {
        Int(id % UInt64(connectionSlices.count))
    }

    // MARK: Connections

    /// A WebSocket connection opened: it is one of the gateway's connections.
    func opened(_ connection: Connection) {
        connections[connection.id] = connection
        connectionSlices[slice(of: connection.id)][connection.id] = connection
    }

    /// Its socket is gone.
    func gone(_ connection: Connection) {
        connectionSlices[slice(of: connection.id)][connection.id] = nil
        connections[connection.id] = nil
        connection.isGone = true
    }

    // MARK: Rooms and seats

    /// A room is served here from now on.
    func kept(_ entry: RoomEntry) {
        rooms[entry.room.name] = entry
    }

    /// A room is no longer served here.
    func dropped(_ name: RoomName) {
        rooms[name] = nil
    }

    /// The connection is the member's in its room.
    func seated(_ connection: Connection, as member: MemberID, in entry: RoomEntry) {
        connection.room = entry.room.name
        connection.member = member
        entry.bind(connection, as: member)
    }

    /// The member's connection no longer speaks for it (closing, gone, replaced).
    func unseated(_ connection: Connection, _ member: MemberID, in entry: RoomEntry) {
        if entry.connections[member] === connection { entry.unbind(member) }
        connection.member = nil
    }

    // MARK: Routes and held lines

    /// Where the connection's lines go from now on (`Route`).
    func routed(_ connection: Connection, _ route: Route) {
        connection.route = route
    }

    /// Whether the member is leaving (a close with 1000) rather than dropped,
    /// which decides whether the room keeps it for its resume grace.
    func leaving(_ connection: Connection, _ leaving: Bool) {
        connection.leaving = leaving
    }

    /// Holds a line that cannot go yet; false when its connection holds its most.
    func hold(_ line: HeldLine, on connection: Connection) -> Bool {
        connection.held.hold(line)
    }

    /// Everything the connection holds, in order; `restore` puts back what could not go.
    func takeHeld(from connection: Connection) -> [HeldLine] {
        connection.held.takeAll()
    }

    func restoreHeld(_ lines: [HeldLine], on connection: Connection) {
        connection.held.restore(lines)
    }

    // MARK: Members other nodes relay here

    /// The next number for a carried member's connection.
    func numberCarried() -> UInt64 {
        defer { nextCarriedID += 1 }
        return nextCarriedID
    }

    /// A member another node relays here on `link`, under its number there.
    func carried(_ member: Connection, on link: Connection, _ number: RelayNumber) {
        member.carrier = .link(link, number)
        link.carried[number] = member
        if member.encoding == .json { link.carriedJSON += 1 } else { link.carriedText += 1 }
        carried[member.id] = member
    }

    /// A carried member is no longer on its link.
    func uncarried(_ member: Connection) {
        guard case .link(let link, let number) = member.carrier, link.carried[number] === member else { return }
        link.carried[number] = nil
        if member.encoding == .json { link.carriedJSON -= 1 } else { link.carriedText -= 1 }
        carried[member.id] = nil
        member.isGone = true
    }

    /// Another node's shared link for a room served here.
    func attached(_ link: Connection, to entry: RoomEntry) {
        link.room = entry.room.name
        entry.links[link.id] = link
    }

    /// That link is gone from its room.
    func detached(_ link: Connection) {
        if let name = link.room { rooms[name]?.links[link.id] = nil }
    }

    /// A shared link's own round trip, from its pings: added to each carried member's.
    func measured(_ link: Connection, roundTrip milliseconds: Int64) {
        link.linkRoundTrip = milliseconds
    }

    // MARK: This node's links to other owners

    func upstreamOpened(_ id: RelayLinks.LinkID, _ client: ClientConnection) {
        upstreams[id] = client
    }

    /// The link's client connection, no longer kept (to be closed).
    func upstreamTaken(_ id: RelayLinks.LinkID) -> ClientConnection? {
        upstreams.removeValue(forKey: id)
    }

    /// The link's client connection closed.
    func upstreamClosed(_ id: RelayLinks.LinkID) {
        upstreams[id] = nil
    }

    // MARK: Held rooms' timers

    func heldTimer(_ timer: RoomTimer, of room: RoomName) {
        heldTimers[room, default: []].append(timer)
    }

    /// The room's held timers, in the order they came due, no longer kept.
    func takeHeldTimers(of room: RoomName) -> [RoomTimer] {
        heldTimers.removeValue(forKey: room) ?? []
    }

    /// The room is no longer this node's: its held timers go with it.
    func forgetHeldTimers(of room: RoomName) {
        heldTimers[room] = nil
    }

    // MARK: Peers warned about

    /// True the first time `peer` is seen forwarding untrusted, while fewer than `limit` were.
    func forwarderWarned(_ peer: String, limit: Int) -> Bool {
        untrustedForwarders.count < limit && untrustedForwarders.insert(peer).inserted
    }
}

/// A room and the connections of its connected members.
final class RoomEntry {
    /// The room's own machine: its handlers call it, and carry out what it decides.
    var room: Room
    fileprivate(set) var connections: [MemberID: Connection] = [:]
    /// How many connections use each encoding, so a broadcast encodes only what
    /// somebody will read.
    fileprivate(set) var jsonConnections = 0
    fileprivate(set) var textConnections = 0
    /// Other nodes' shared links for this room (connections of encoding `relay`).
    fileprivate(set) var links: [UInt64: Connection] = [:]

    init(room: Room) {
        self.room = room
    }

    fileprivate func bind(_ connection: Connection, as member: MemberID) {
        if let previous = connections[member] { count(previous, -1) }
        connections[member] = connection
        count(connection, 1)
    }

    fileprivate func unbind(_ member: MemberID) {
        guard let connection = connections.removeValue(forKey: member) else { return }
        count(connection, -1)
    }

    private func count(_ connection: Connection, _ sign: Int) {
        switch connection.encoding {
        case .json: jsonConnections += sign
        case .text: textConnections += sign
        case .echo, .relay: break
        }
    }
}

/// One WebSocket connection: who it is in which room, and its life
/// (`ConnectionState`). Lives on the service thread only.
final class Connection {
    enum Encoding {
        case json, text
        /// The conformance suite's echo endpoint: no room, messages come back.
        case echo
        /// Another node's shared link for a room this node owns
        /// (`Gateway+RelayedMembers.swift`): it carries that node's members.
        case relay
    }

    /// How a connection's frames reach its peer.
    enum Carrier {
        /// Its own socket.
        case socket
        /// Another node's shared link (a connection of encoding `relay`), on
        /// which the member is known by its number.
        case link(Connection, RelayNumber)
    }

    /// Also the key under which the libwebsockets layer keeps its socket
    /// (`LWSServer.sockets`): nothing outside the LWS* files holds a C pointer.
    let id: UInt64
    let address: String
    let encoding: Encoding
    fileprivate(set) var room: RoomName?
    fileprivate(set) var member: MemberID?
    /// The connection's own machine (its outbox, rate, pings and close).
    var state: ConnectionState
    /// The libwebsockets layer's mark: a direct write is already asked for in
    /// this turn of the loop (`LWSServer.requestWrite`).
    var writeRequested = false
    /// The socket is gone (`GatewayTables.gone`); a write asked for earlier in
    /// the same turn of the loop is then skipped.
    fileprivate(set) var isGone = false
    /// The client closed with 1000: its member leaves at once, without a grace.
    fileprivate(set) var leaving = false
    /// A front's member (Syncplay's port): its client cannot resume it, so when
    /// the server shuts down it leaves its room rather than wait out a grace.
    var fromFront = false
    /// Where its lines go (`Route.swift`), and those held until they can.
    fileprivate(set) var route = Route.local
    fileprivate var held: HeldLines
    fileprivate(set) var carrier = Carrier.socket
    /// On a shared relay link: the members it carries, by their number on it,
    /// and how many of them read each encoding (a broadcast goes down the link
    /// once per encoding somebody reads).
    fileprivate(set) var carried: [RelayNumber: Connection] = [:]
    fileprivate(set) var carriedJSON = 0
    fileprivate(set) var carriedText = 0
    /// A shared relay link's own round trip, in milliseconds, from its pings:
    /// added to each carried member's.
    fileprivate(set) var linkRoundTrip: Int64?

    var isCarried: Bool {
        if case .link = carrier { true } else { false }
    }

    init(id: UInt64, address: String, encoding: Encoding, state: ConnectionState, maximumHeldLines: Int) {
        self.id = id
        self.address = address
        self.encoding = encoding
        self.state = state
        held = HeldLines(limit: maximumHeldLines)
    }
}
