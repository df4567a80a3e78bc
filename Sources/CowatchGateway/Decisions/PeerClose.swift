import CowatchConnection

/// A client's close frame, as the server reads it (RFC 6455, section 5.5.1):
/// its code, and whether it is malformed (a one-byte payload, or a reason that is
/// not UTF-8), which fails the connection rather than being echoed.
/// libwebsockets answers the codes the RFC reserves with 1002 by rewriting them
/// in the frame its echo is made from, but lets codes of 5000 and above
/// through, which are no close code either: those are rewritten to 1002 too.
struct PeerClose: Equatable {
    /// The code as the metrics count it ("1005" when the frame had none).
    var code: String
    var malformed: Bool
    /// The payload's first two bytes are to become these (1002) before the echo.
    var rewrite: (UInt8, UInt8)?

    static func == (lhs: PeerClose, rhs: PeerClose) -> Bool {
        lhs.code == rhs.code && lhs.malformed == rhs.malformed && lhs.rewrite.map { [$0.0, $0.1] } == rhs.rewrite.map { [$0.0, $0.1] }
    }

    static func read(_ payload: UnsafeRawBufferPointer) -> PeerClose {
        guard payload.count >= 2 else { return PeerClose(code: "1005", malformed: payload.count == 1) }
        let sent = UInt16(payload[0]) << 8 | UInt16(payload[1])
        // The server checks UTF-8 itself (see `ConnectionState`), close reasons included.
        let malformed = !UTF8Validator.isValid(payload.dropFirst(2))
        guard sent >= 5000 else { return PeerClose(code: String(sent), malformed: malformed) }
        return PeerClose(code: "1002", malformed: malformed, rewrite: (0x03, 0xEA))
    }
}
