import CowatchConnection
import CowatchCore

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
    var room: RoomName?
    var member: MemberID?
    var state: ConnectionState
    /// A direct write is already asked for in this turn of the loop (LWSServer).
    var writeRequested = false
    /// The socket is gone (`Gateway.closed`); a write asked for earlier in the
    /// same turn of the loop is then skipped.
    var isGone = false
    /// The client closed with 1000: its member leaves at once, without a grace.
    var leaving = false
    /// Where its lines go (`Route.swift`), and those held until they can.
    var route = Route.local
    var held: HeldLines
    var carrier = Carrier.socket
    /// On a shared relay link: the members it carries, by their number on it,
    /// and how many of them read each encoding (a broadcast goes down the link
    /// once per encoding somebody reads).
    var carried: [RelayNumber: Connection] = [:]
    var carriedJSON = 0
    var carriedText = 0
    /// A shared relay link's own round trip, in milliseconds, from its pings:
    /// added to each carried member's.
    var linkRoundTrip: Int64?

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

/// What a WebSocket upgrade asked for, captured while its headers are available.
struct UpgradeRequest {
    var room: RoomName?
    var echo: Bool
    /// `/relay/ROOM`: another node's shared link for the room (`RelayWire`).
    var relay = false
    /// A relay link's `X-Cowatch-Relay-Proof` header (`RelayProof`).
    var relayProof: String?
    var name: String?
    var resume: String?
    var player: Bool
    var join: Bool
    /// The room's owner key (`owner=`).
    var owner: String?
    /// The identity the page or client keeps (`device=`), for bans.
    var device: String?
    /// An invite link's token (`invite=`) and the room password (`password=`).
    var invite: String?
    var password: String?
    /// A bot's token (`token=`, or `Authorization: Bearer`).
    var token: String?
    /// An operator's room-creation token (`create=`), for `room-creation token`.
    var create: String?
    /// The page's `Origin` and the `Host` it asked for, when a browser sent them.
    var origin: String?
    var hostHeader: String?
    var address: String
}
