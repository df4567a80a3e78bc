import CowatchConnection
import CowatchCore

/// Everything the gateway's decisions ask to be done, as one value: what each
/// machine decides (the gateway's own `GatewayState`, a room's `Room`, a
/// connection's `ConnectionState`, in a cluster the `RoomOwnership` and the
/// `RelayLinks`) lifted into one type, and every change to the gateway's own
/// tables (its rooms, its connections, who sits where, where a connection's
/// lines go). One interpreter carries them out (`Gateway.run`, in
/// `Gateway+Interpreter.swift`); the event handlers decide, or ask a machine
/// to, and hand it what comes out.
enum GatewayEffect {
    /// The gateway's own decisions (`GatewayState`).
    case gateway(GatewayAction)
    /// A room's decisions, carried out together: their store changes go in one write.
    case room([RoomAction], in: RoomEntry)
    /// A connection's decisions: on its socket, or for a member another node
    /// relays here, on that node's link.
    case connection([ConnectionAction], on: Connection)
    /// In a cluster, what the room ownership decides (`RoomOwnership`).
    case ownership([RoomOwnership.Action])
    /// On a node that relays members, what its shared links decide (`RelayLinks`).
    case relaying([RelayLinks.Action])

    /// An event for one connection alone.
    case send(RoomEvent, to: Connection)
    /// What is queued goes first, then the close frame with this code and reason.
    case close(Connection, code: UInt16, reason: String)

    /// A WebSocket connection opened (it is one of the gateway's connections).
    case connectionOpened(Connection)
    /// Its socket is gone.
    case connectionGone(Connection)
    /// A room is served here from now on.
    case roomKept(RoomEntry)
    /// A room is no longer served here (its timers go with it).
    case roomDropped(RoomName)
    /// The connection is the member's in its room.
    case seated(Connection, as: MemberID, in: RoomEntry)
    /// The member's connection no longer speaks for it (closing, gone, replaced).
    case unseated(Connection, MemberID, in: RoomEntry)
    /// Where the connection's lines go from now on (`Route`).
    case routed(Connection, Route)
    /// Whether the member is leaving (a close with 1000) rather than dropped,
    /// which decides whether the room keeps it for its resume grace.
    case leaving(Connection, Bool)
    /// A member another node relays here on `link`, under its number there.
    case carried(Connection, on: Connection, RelayNumber)
    /// A carried member is no longer on its link.
    case uncarried(Connection)
    /// Another node's shared link for a room served here.
    case linkAttached(Connection, to: RoomEntry)
    /// That link is gone from its room.
    case linkDetached(Connection)
}
