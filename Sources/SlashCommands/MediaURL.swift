/// A media address shared with the room: `http` or `https`, with a host, no
/// whitespace or control characters, at most 2,048 bytes.
///
/// The server never fetches it; the limits keep every member's client from being
/// handed something it cannot or should not open.
public struct MediaURL: Hashable, Sendable, CustomStringConvertible {
    public static let maximumBytes = 2048

    public let text: String

    /// The scheme is written in lower case (`HTTP://` is `http://`, RFC 3986
    /// section 6.2.2.1), so that whatever reads the URL by its scheme, the
    /// server's link check and the members' players, reads it the same way.
    public init?(_ text: String) {
        guard Self.validationProblem(text) == nil, let colon = text.firstIndex(of: ":") else { return nil }
        self.text = text[..<colon].lowercased() + text[colon...]
    }

    public var description: String { text }

    /// The host, lowercased, without user, port or brackets' contents changed.
    public var host: String {
        let rest = text.drop { $0 != "/" }.drop { $0 == "/" }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let hostAndPort = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        if hostAndPort.hasPrefix("[") { return String(hostAndPort.prefix { $0 != "]" }.dropFirst()).lowercased() }
        return String(hostAndPort.prefix { $0 != ":" }).lowercased()
    }

    public static func validationProblem(_ text: String) -> String? {
        if text.utf8.count > maximumBytes { return "a URL has at most \(maximumBytes) bytes" }
        let lower = text.lowercased()
        let rest: Substring
        if lower.hasPrefix("https://") {
            rest = text.dropFirst(8)
        } else if lower.hasPrefix("http://") {
            rest = text.dropFirst(7)
        } else {
            return "the URL must start with http:// or https://"
        }
        for scalar in text.unicodeScalars where !DisplayName.isVisible(scalar) {
            return "the URL must not contain spaces or control characters"
        }
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        let host = authority.split(separator: "@", omittingEmptySubsequences: false).last ?? ""
        if host.isEmpty || host.hasPrefix(":") { return "the URL needs a host" }
        return nil
    }
}
