import CowatchCore
import DequeModule

/// One WebSocket connection's state in Swift. Lives on the service thread only.
final class Connection {
    enum Encoding {
        case json, text
        /// The conformance suite's echo endpoint: no room, messages come back.
        case echo
    }

    let id: UInt64
    /// The libwebsockets connection; used only by files named LWS*.
    let wsi: OpaquePointer
    let address: String
    let encoding: Encoding
    var room: RoomName?
    var member: MemberID?
    /// Fragments of the message being received.
    var incoming: [UInt8] = []
    var outbox = Deque<OutboundFrame>()
    /// Monotonic µs since the outbox first overflowed and has not drained.
    var overflowingSince: Int64?
    var pendingClose: (code: UInt16, reason: String)?
    /// The client's close frame arrived.
    var closeSeen = false
    var limiter: RateLimiter
    /// Lines refused for rate since the connection was last within its rate.
    var strikes = 0
    /// Monotonic µs of the last frame or pong heard.
    var lastHeard: Int64
    /// Monotonic µs of the ping in flight, if any.
    var pingSentAt: Int64?
    var nextPingAt: Int64

    init(id: UInt64, wsi: OpaquePointer, address: String, encoding: Encoding, limiter: RateLimiter, now: Int64) {
        self.id = id
        self.wsi = wsi
        self.address = address
        self.encoding = encoding
        self.limiter = limiter
        self.lastHeard = now
        self.nextPingAt = now
    }
}

/// What a WebSocket upgrade asked for, captured while its headers are available.
struct UpgradeRequest {
    var room: RoomName?
    var echo: Bool
    var name: String?
    var resume: String?
    var player: Bool
    var join: Bool
    var address: String
}
