import Crypto

/// Digests of the secrets a room is shown (owner keys, resume tokens, device
/// identities, invite and bot tokens), so that it keeps nothing a secret can be
/// read back from, and values derived from a secret without revealing it.
/// SHA-256 and HMAC come from swift-crypto (BoringSSL underneath).
public enum SecretDigest {
    /// SHA-256 of `text`'s UTF-8 bytes as 64 lowercase hex digits: the form every
    /// digest in a store has, so digests saved before still match.
    public static func hex(_ text: String) -> String {
        hexText(SHA256.hash(data: Array(text.utf8)))
    }

    /// HMAC-SHA256 of `message` keyed with `secret`, as 64 lowercase hex digits:
    /// a value that only the secret's holder can make, and that tells nothing
    /// about the secret (a plain digest of the two joined would be open to
    /// length extension and mixes key and message).
    public static func keyed(_ message: String, secret: String) -> String {
        let key = SymmetricKey(data: Array(secret.utf8))
        return hexText(HMAC<SHA256>.authenticationCode(for: Array(message.utf8), using: key))
    }

    /// Bytes as lowercase hex digits.
    public static func hexText<Bytes: Sequence<UInt8>>(_ bytes: Bytes) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    /// Compares two digests in time that does not depend on where they differ.
    /// swift-crypto's digests compare that way among themselves, but rooms and
    /// stores keep digests as hex text, and the library offers no such
    /// comparison for text or plain bytes: hence these few lines.
    public static func equal(_ lhs: String, _ rhs: String) -> Bool {
        let left = Array(lhs.utf8), right = Array(rhs.utf8)
        guard left.count == right.count else { return false }
        var difference: UInt8 = 0
        for index in left.indices { difference |= left[index] ^ right[index] }
        return difference == 0
    }
}
