/// The subprotocols a client can ask for.
public enum ClientEncoding: String, Sendable {
    case json = "cowatch.v1.json"
    case text = "cowatch.v1.text"
}

/// A parsed room address: `ws://host:port/path?query`, `wss://` for one behind
/// TLS, or the page's own link (`http://`, `https://`), which names the same room
/// on the same server.
public struct WebSocketAddress: Sendable, Hashable {
    public var host: String
    public var port: Int
    /// Path and query, starting with `/`.
    public var path: String
    /// Over TLS (`wss://`, `https://`): the server's certificate is verified
    /// against the client's trust (`ClientTrust`).
    public var secure: Bool
    /// The local address to connect from (nil: the kernel's choice). A load
    /// generator spreads its connections over several, since each local address
    /// has only about 28,000 ephemeral ports towards one server port.
    public var source: String?

    /// The schemes an address may start with: a WebSocket's and the page's.
    public static let schemes: [(prefix: String, secure: Bool)] = [
        ("ws://", false), ("http://", false), ("wss://", true), ("https://", true),
    ]

    public init?(_ text: String) {
        guard let scheme = Self.schemes.first(where: { text.lowercased().hasPrefix($0.prefix) }) else { return nil }
        secure = scheme.secure
        let rest = text.dropFirst(scheme.prefix.count)
        let defaultPort = secure ? 443 : 80
        let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" }) ?? rest.endIndex
        let authority = rest[rest.startIndex..<authorityEnd]
        // A fragment is the page's own (never sent to a server).
        let afterAuthority = rest[authorityEnd...].prefix { $0 != "#" }
        path = afterAuthority.isEmpty ? "/" : (afterAuthority.hasPrefix("?") ? "/" : "") + String(afterAuthority)
        if authority.contains("@") { return nil }
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            port = after.hasPrefix(":") ? Int(after.dropFirst()) ?? -1 : (after.isEmpty ? defaultPort : -1)
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[..<colon])
            port = Int(authority[authority.index(after: colon)...]) ?? -1
        } else {
            host = String(authority)
            port = defaultPort
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

    /// The address as a WebSocket URL (`ws://` or `wss://`), for messages.
    public var webSocketURL: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let defaultPort = secure ? 443 : 80
        return (secure ? "wss://" : "ws://") + shownHost + (port == defaultPort ? "" : ":\(port)") + path
    }

    /// `host:port`, as a message names the server.
    public var authority: String { (host.contains(":") ? "[\(host)]" : host) + ":\(port)" }

    /// An IPv4 or IPv6 address rather than a name: its certificate must list it
    /// as an IP address, and it is never sent as a server name (RFC 6066, 3).
    public var isAddressLiteral: Bool {
        host.contains(":") || (host.split(separator: ".", omittingEmptySubsequences: false).count == 4
                                && host.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { UInt8($0) != nil })
    }

    /// The request's `Host` field (RFC 9110, 7.2): an IPv6 address in brackets,
    /// the port unless it is the scheme's own, as a browser sends it; a server
    /// (or nginx) reads a bare `::1` as no host at all.
    public var hostHeader: String {
        (host.contains(":") ? "[\(host)]" : host) + (port == (secure ? 443 : 80) ? "" : ":\(port)")
    }
}
