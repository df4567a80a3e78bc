import CowatchClient
import CowatchConnection
import CowatchCore
import CowatchStore
import CowatchTime

/// What an event does to the world, as a value: every frame, close, socket
/// request, store write, lease call, relay link and fetch the gateway decides
/// on. The event's handlers decide them (each machine, `GatewayState`, a room's
/// `Room`, a connection's `ConnectionState`, the `RoomOwnership` and the
/// `RelayLinks`, decides, and the handlers turn what it decides into these),
/// and one executor carries them out in order at the event's edge
/// (`Gateway.eventEnds`, `Gateway+Executor.swift`), feeding what a carried-out
/// effect decides in turn (a full outbox, a closing connection leaving its
/// room) back in after it. So a test reads what an event does without a
/// socket, a database or another node (Tests/CowatchGatewayTests/GatewayEffectTests.swift).
///
/// The rare effects with large payloads (a relay message, an HTTP answer) are
/// `indirect`: every effect is appended and read once per recipient of a
/// broadcast, and a value of 33 bytes is cheaper to move than one of 177.
///
/// The gateway's own tables are not effects: they change at once, through
/// `GatewayTables`, because the handler that changes them reads them next.
enum GatewayEffect {
    // MARK: Frames

    /// Frames for one connection: a member's (on its socket or, carried, down
    /// its link), or another node's link.
    case send([OutboundFrame], to: Connection)
    /// A room's event, encoded once per encoding somebody reads: the JSON frame
    /// and the text lines, to each recipient in its own encoding.
    case broadcast(json: OutboundFrame?, text: [OutboundFrame], to: [Connection])
    /// One frame made once, for several connections whatever their encoding
    /// (what another node's link brings down for its members here).
    case deliver(OutboundFrame, to: [Connection])
    /// What is queued goes first, then the close frame with this code and reason.
    case close(Connection, code: UInt16, reason: String)

    // MARK: Sockets and the service loop

    /// The connection has frames to write.
    case requestWrite(Connection)
    /// Pause or resume reading from its socket (rx flow control).
    case setReading(Connection, paused: Bool)
    /// Close the socket without a close frame.
    case drop(Connection)
    /// Answer a plain HTTP request held for later.
    indirect case answer(httpRequest: UInt64, HTTPResponse)
    /// The rooms' timer goes off at the earliest due timer (nil: none).
    case armRoomTimers(nextDue: ServerInstant?)
    case armHousekeeping(after: MonotonicDuration)
    /// The service loop looks at its phase again (the server finishing).
    case wakeLoop

    // MARK: The store

    /// Changes to write, in one write (in a cluster, the cluster's store).
    case store([StoreChange])
    /// Everything queued is written before anything else happens.
    case flushStore

    // MARK: In a cluster

    /// The store writes `room` under `epoch` (fencing), or no longer writes it.
    case own(RoomName, epoch: Int64)
    case disown(RoomName)
    /// Ask the database which node owns `room`, taking its lease when free.
    case acquireLease(RoomName, mayTakeLapsed: Bool)
    case releaseLease(RoomName, epoch: Int64)
    case extendCeiling(RoomName, epoch: Int64, to: Int64)
    /// The rooms the heartbeat renews.
    case renewLeases(Set<RoomName>)
    /// One change of the operator's, to the cluster's tables.
    indirect case shareOperatorChange(SharedOperatorChange)
    /// The leases' view of the cluster's rooms, for `GET /admin/rooms` request `id`.
    case listClusterRooms(httpRequest: UInt64)
    /// The node leaves: its lease keeper ends its leases and stops.
    case stopLeases
    /// A shared link to the node at `address` for a room it owns, proving the cluster's secret.
    indirect case openRelay(RelayLinks.LinkID, WebSocketAddress, proof: String)
    indirect case relaySend(RelayLinks.LinkID, RelayUp)
    case closeRelay(RelayLinks.LinkID, code: UInt16)
    // The media server for voice (`Voice/`): its link, and a request on it.
    case openVoiceLink
    case closeVoiceLink
    indirect case voiceSend(String)

    // MARK: The work done for strangers

    /// Look at a shared link before its command reaches the room.
    indirect case checkMedia(String, connection: UInt64, address: String)
    /// Fetch a subtitle track for the plain HTTP request `id`.
    indirect case fetchSubtitles(String, httpRequest: UInt64, address: String)
}
