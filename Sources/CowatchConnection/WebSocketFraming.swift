/// The server's side of RFC 6455 framing. A server's frames are never masked, so
/// a frame's bytes are the same for every recipient: a broadcast is framed once
/// and the same bytes go to every member.
package enum WebSocketFraming {
    package enum Opcode: UInt8 {
        case text = 0x1
        case binary = 0x2
        case close = 0x8
        case ping = 0x9
    }

    /// Longest header: two bytes and a 64-bit length.
    package static let maximumHeaderLength = 10

    /// The header of a final (unfragmented) frame carrying `length` bytes.
    package static func header(_ opcode: Opcode, length: Int) -> [UInt8] {
        let first = 0x80 | opcode.rawValue
        switch length {
        case ..<126:
            return [first, UInt8(length)]
        case ..<65536:
            return [first, 126, UInt8(length >> 8), UInt8(length & 0xFF)]
        default:
            var bytes: [UInt8] = [first, 127]
            for shift in stride(from: 56, through: 0, by: -8) { bytes.append(UInt8((UInt64(length) >> UInt64(shift)) & 0xFF)) }
            return bytes
        }
    }

    /// A close frame's payload: the code, then a reason of at most 123 bytes (cut
    /// at a character boundary), as a control frame allows.
    package static func closePayload(code: UInt16, reason: String) -> [UInt8] {
        [UInt8(code >> 8), UInt8(code & 0xFF)] + Array(closeReason(reason).utf8)
    }

    /// A close reason fits in 123 bytes; cut at a character boundary.
    package static func closeReason(_ reason: String) -> String {
        var text = ""
        for character in reason {
            guard text.utf8.count + character.utf8.count <= 123 else { break }
            text.append(character)
        }
        return text
    }
}
