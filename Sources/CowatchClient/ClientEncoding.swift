/// The subprotocols a client can ask for.
public enum ClientEncoding: String, Sendable {
    case json = "cowatch.v1.json"
    case text = "cowatch.v1.text"
}

/// A parsed `ws://host:port/path?query` address.
public struct WebSocketAddress: Sendable, Hashable {
    public var host: String
    public var port: Int
    /// Path and query, starting with `/`.
    public var path: String
    /// The local address to connect from (nil: the kernel's choice). A load
    /// generator spreads its connections over several, since each local address
    /// has only about 28,000 ephemeral ports towards one server port.
    public var source: String?

    public init?(_ text: String) {
        let rest: Substring
        if text.hasPrefix("ws://") { rest = text.dropFirst(5) } else if text.hasPrefix("http://") { rest = text.dropFirst(7) } else { return nil }
        let authorityEnd = rest.firstIndex(of: "/") ?? rest.endIndex
        let authority = rest[rest.startIndex..<authorityEnd]
        path = authorityEnd == rest.endIndex ? "/" : String(rest[authorityEnd...])
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            port = after.hasPrefix(":") ? Int(after.dropFirst()) ?? -1 : 80
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            port = Int(authority[authority.index(after: colon)...]) ?? -1
        } else {
            host = String(authority)
            port = 80
        }
        guard !host.isEmpty, (1...65535).contains(port) else { return nil }
        // A path typed with spaces or other characters a request line cannot carry
        // is sent percent-encoded, so the server judges the name it was given.
        path = path.utf8.map { byte in
            byte > 0x20 && byte < 0x7F ? String(UnicodeScalar(byte))
                : (byte < 0x10 ? "%0" : "%") + String(byte, radix: 16, uppercase: true)
        }.joined()
    }

    /// This address with a query parameter added (value percent-encoded).
    public func adding(_ name: String, _ value: String) -> WebSocketAddress {
        var copy = self
        let encoded = value.utf8.map { byte -> String in
            let unreserved = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A)
                || (byte >= 0x61 && byte <= 0x7A) || byte == 0x2D || byte == 0x2E || byte == 0x5F || byte == 0x7E
            if unreserved { return String(UnicodeScalar(byte)) }
            let hex = String(byte, radix: 16, uppercase: true)
            return "%" + (hex.count == 1 ? "0" + hex : hex)
        }.joined()
        copy.path += (path.contains("?") ? "&" : "?") + name + "=" + encoded
        return copy
    }
}
