import DequeModule
import Foundation

/// How a connection ended, as the client saw it.
public struct CloseInfo: Sendable, Hashable {
    /// The code of the server's close frame; nil when the connection dropped
    /// without one (or never opened).
    public var code: UInt16?
    public var reason: String

    public init(code: UInt16?, reason: String) {
        self.code = code
        self.reason = reason
    }
}

/// What a client connection reports, called on the client's service thread.
public struct ClientHandlers: Sendable {
    public var opened: @Sendable () -> Void
    public var received: @Sendable (String) -> Void
    public var closed: @Sendable (CloseInfo) -> Void

    public init(opened: @escaping @Sendable () -> Void = {},
                received: @escaping @Sendable (String) -> Void,
                closed: @escaping @Sendable (CloseInfo) -> Void = { _ in }) {
        self.opened = opened
        self.received = received
        self.closed = closed
    }
}

/// One WebSocket client connection. `send` and `close` are safe from any thread;
/// the frames go out on the service thread of its `WebSocketClients`.
public final class ClientConnection: @unchecked Sendable {
    public let address: WebSocketAddress
    public let encoding: ClientEncoding
    let handlers: ClientHandlers
    let id: UInt64
    weak var owner: WebSocketClients?

    // Service-thread state.
    var wsi: OpaquePointer?
    /// The code of the close frame this side sends when asked to close.
    var closeCodeToSend: UInt16 = 1000
    var outbox = Deque<(bytes: [UInt8], binary: Bool)>()
    /// C strings lws was given to connect; kept until the connection ends.
    var cStrings: [UnsafeMutablePointer<CChar>] = []
    /// The subprotocol asked for: the encoding's, unless the caller named another.
    var subprotocol = ""
    /// Extra upgrade request headers, added when libwebsockets asks for them.
    var headers: [(name: String, value: String)] = []
    var incoming: [UInt8] = []
    var closeRequested = false
    var closeCode: UInt16?
    var closeReason = ""
    var finished = false
    /// OpenSSL's verdict on the server's certificate when it refused it.
    var certificateError: Int32?
    /// The names the server's certificate is for, when it was judged.
    var certificateNames: String?

    init(id: UInt64, address: WebSocketAddress, encoding: ClientEncoding, handlers: ClientHandlers, owner: WebSocketClients) {
        self.id = id
        self.address = address
        self.encoding = encoding
        self.handlers = handlers
        self.owner = owner
    }

    /// Sends one text message (it may hold several lines).
    public func send(_ text: String) {
        send(bytes: Array(text.utf8), binary: false)
    }

    /// Sends raw bytes as one message; `binary` makes it a binary frame. For tests
    /// of what the server refuses.
    public func send(bytes: [UInt8], binary: Bool) {
        owner?.submit(.send(self, bytes, binary: binary))
    }

    /// Closes with 1000, which tells a Cowatch server that this member is leaving
    /// for good (docs/protocol.md, "Close codes").
    public func close() {
        close(code: 1000)
    }

    /// Closes with `code`: 1001 ("going away") leaves the member its resume grace.
    public func close(code: UInt16) {
        owner?.submit(.close(self, code: code))
    }
}
