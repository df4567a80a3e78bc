/// Checks UTF-8 as it arrives, piece by piece, so that a message split across
/// fragments (or across reads) is refused at the first byte that cannot be part
/// of valid UTF-8 (RFC 3629: no overlong forms, no surrogates, nothing past
/// U+10FFFF), not only once it is complete.
package struct UTF8Validator: Equatable, Sendable {
    /// Continuation bytes still expected for the current character.
    private var pending = 0
    /// The allowed range of the next byte, narrower than 80...BF right after some
    /// lead bytes (E0, ED, F0, F4).
    private var nextLow: UInt8 = 0x80
    private var nextHigh: UInt8 = 0xBF

    /// False at the first invalid byte; the validator is then of no further use.
    package mutating func feed<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Bool {
        for byte in bytes {
            if pending > 0 {
                guard byte >= nextLow && byte <= nextHigh else { return false }
                pending -= 1
                nextLow = 0x80
                nextHigh = 0xBF
                continue
            }
            switch byte {
            case 0x00...0x7F: continue
            case 0xC2...0xDF: pending = 1
            case 0xE0: pending = 2; nextLow = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: pending = 2
            case 0xED: pending = 2; nextHigh = 0x9F
            case 0xF0: pending = 3; nextLow = 0x90
            case 0xF1...0xF3: pending = 3
            case 0xF4: pending = 3; nextHigh = 0x8F
            default: return false
            }
        }
        return true
    }

    /// Whether the text so far ends on a character boundary: a message must.
    package var isComplete: Bool { pending == 0 }

    package mutating func reset() { self = UTF8Validator() }

    package static func isValid<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> Bool {
        var validator = UTF8Validator()
        return validator.feed(bytes) && validator.isComplete
    }
}
