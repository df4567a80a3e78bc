import CowatchTime

/// One frame, framed once: header and payload ready for the wire, written as they
/// are. Every recipient's outbox holds the same object, so fan-out copies and
/// frames nothing per member. (With permessage-deflate negotiated these frames
/// go uncompressed, which RFC 7692 allows message by message.)
package final class OutboundFrame {
    package enum Kind {
        case text, binary, ping, close

        var opcode: WebSocketFraming.Opcode {
            switch self {
            case .text: .text
            case .binary: .binary
            case .ping: .ping
            case .close: .close
            }
        }
    }

    /// Room for the longest header before the payload.
    package static let headroom = WebSocketFraming.maximumHeaderLength

    package let kind: Kind
    /// Payload bytes.
    package let length: Int
    /// When the frame was made, for the fan-out histogram.
    package let createdAt: MonotonicInstant
    /// Outboxes still holding this frame.
    package var pendingRecipients = 0
    private let headerLength: Int
    private let storage: UnsafeMutableRawPointer

    package init<Bytes: Collection<UInt8>>(_ bytes: Bytes, kind: Kind = .text, createdAt: MonotonicInstant) {
        self.kind = kind
        self.length = bytes.count
        self.createdAt = createdAt
        let header = WebSocketFraming.header(kind.opcode, length: bytes.count)
        headerLength = header.count
        storage = UnsafeMutableRawPointer.allocate(byteCount: Self.headroom + Swift.max(1, bytes.count), alignment: 16)
        let payload = storage.advanced(by: Self.headroom).assumingMemoryBound(to: UInt8.self)
        _ = UnsafeMutableBufferPointer(start: payload, count: bytes.count).initialize(from: bytes)
        let headerStart = storage.advanced(by: Self.headroom - header.count).assumingMemoryBound(to: UInt8.self)
        _ = UnsafeMutableBufferPointer(start: headerStart, count: header.count).initialize(from: header)
    }

    deinit {
        storage.deallocate()
    }

    /// Header and payload together: what goes on the wire.
    package var framedLength: Int { headerLength + length }

    package var framed: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage.advanced(by: Self.headroom - headerLength), count: framedLength)
    }

    package var payload: UnsafeRawBufferPointer {
        UnsafeRawBufferPointer(start: storage.advanced(by: Self.headroom), count: length)
    }
}
