import CLibWebSockets

/// One encoded frame in memory laid out as libwebsockets wants it: `LWS_PRE`
/// spare bytes, then the payload. A broadcast makes one per encoding and every
/// recipient's outbox holds the same object, so fan-out copies no payload.
final class OutboundFrame {
    enum Kind {
        case text
        case binary
        case ping
    }

    static let headroom = Int(cw_lws_pre())

    let kind: Kind
    let length: Int
    /// A `state` event: a slow connection may skip it for a newer one.
    let isState: Bool
    /// Monotonic microseconds when the broadcast was made, for the fan-out histogram.
    let createdAt: Int64
    /// Outboxes still holding this frame.
    var pendingRecipients = 0
    private let storage: UnsafeMutableRawPointer

    init<Bytes: Collection<UInt8>>(_ bytes: Bytes, kind: Kind = .text, isState: Bool = false, createdAt: Int64) {
        self.kind = kind
        self.length = bytes.count
        self.isState = isState
        self.createdAt = createdAt
        storage = UnsafeMutableRawPointer.allocate(byteCount: Self.headroom + Swift.max(1, bytes.count), alignment: 16)
        let payload = storage.advanced(by: Self.headroom).assumingMemoryBound(to: UInt8.self)
        _ = UnsafeMutableBufferPointer(start: payload, count: bytes.count).initialize(from: bytes)
    }

    deinit {
        storage.deallocate()
    }

    /// Writes the frame on `wsi`; true when libwebsockets took all of it.
    func write(to wsi: OpaquePointer) -> Bool {
        let payload = storage.advanced(by: Self.headroom).assumingMemoryBound(to: UInt8.self)
        let protocolKind: lws_write_protocol = switch kind {
        case .text: LWS_WRITE_TEXT
        case .binary: LWS_WRITE_BINARY
        case .ping: LWS_WRITE_PING
        }
        return lws_write(wsi, payload, length, protocolKind) >= length
    }
}
