import Foundation

/// WebSocket frames by hand, for peers that misbehave on purpose: a client's
/// masked text frames, and the server's frames parsed from raw bytes.
enum RawFrames {
    struct Frame: Equatable {
        var opcode: UInt8
        var payload: [UInt8]

        var text: String { String(decoding: payload, as: UTF8.self) }
        /// A close frame's code, if it has one.
        var closeCode: UInt16? { opcode == 8 && payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil }
        var closeReason: String { String(decoding: payload.dropFirst(2), as: UTF8.self) }
    }

    /// A client's masked, final text frame.
    static func maskedText(_ text: String, opcode: UInt8 = 1) -> [UInt8] {
        let payload = Array(text.utf8)
        let mask: [UInt8] = [0x37, 0xFA, 0x21, 0x3D]
        var frame: [UInt8] = [0x80 | opcode]
        if payload.count < 126 {
            frame.append(0x80 | UInt8(payload.count))
        } else if payload.count < 65536 {
            frame += [0x80 | 126, UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
        } else {
            frame.append(0x80 | 127)
            frame += (0..<8).reversed().map { UInt8((UInt64(payload.count) >> (8 * UInt64($0))) & 0xFF) }
        }
        frame += mask
        frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
        return frame
    }

    /// A client's masked close frame with `code`.
    static func maskedClose(code: UInt16) -> [UInt8] {
        let mask: [UInt8] = [0x11, 0x22, 0x33, 0x44]
        let payload = [UInt8(code >> 8), UInt8(code & 0xFF)]
        return [0x88, 0x80 | 2] + mask + payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
    }

    /// The complete frames in `bytes` (server frames are unmasked).
    static func parse(_ bytes: [UInt8]) -> [Frame] {
        var frames: [Frame] = []
        var index = 0
        while index + 2 <= bytes.count {
            let opcode = bytes[index] & 0x0F
            var length = Int(bytes[index + 1] & 0x7F)
            var start = index + 2
            if length == 126 {
                guard start + 2 <= bytes.count else { break }
                length = Int(bytes[start]) << 8 | Int(bytes[start + 1])
                start += 2
            } else if length == 127 {
                guard start + 8 <= bytes.count else { break }
                length = bytes[start..<start + 8].reduce(0) { $0 << 8 | Int($1) }
                start += 8
            }
            guard start + length <= bytes.count else { break }
            frames.append(Frame(opcode: opcode, payload: Array(bytes[start..<start + length])))
            index = start + length
        }
        return frames
    }
}
