import Foundation

/// An IRC channel's address: `irc://HOST[:PORT]/#channel`, `ircs://` for TLS.
public struct IRCAddress: Sendable, Hashable {
    public var host: String
    public var port: Int
    public var tls: Bool
    public var channel: String

    public init?(_ text: String) {
        let rest: Substring
        if text.lowercased().hasPrefix("ircs://") {
            tls = true
            rest = text.dropFirst(7)
        } else if text.lowercased().hasPrefix("irc://") {
            tls = false
            rest = text.dropFirst(6)
        } else {
            return nil
        }
        guard let slash = rest.firstIndex(of: "/") else { return nil }
        let authority = rest[rest.startIndex..<slash]
        var channel = String(rest[rest.index(after: slash)...])
        if channel.hasPrefix("%23") { channel = "#" + channel.dropFirst(3) }
        if let first = channel.first, !"#&+!".contains(first) { channel = "#" + channel }
        // RFC 2812 1.3: up to 50 characters, none of space, comma, BEL, NUL, CR, LF.
        guard channel.count >= 2, channel.count <= 50,
              !channel.unicodeScalars.contains(where: { $0.value <= 0x20 || $0 == "," || $0.value == 0x7F }) else { return nil }
        self.channel = channel
        let defaultPort = tls ? 6697 : 6667
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else { return nil }
            host = String(authority[authority.index(after: authority.startIndex)..<close])
            let after = authority[authority.index(after: close)...]
            port = after.isEmpty ? defaultPort : (after.hasPrefix(":") ? Int(after.dropFirst()) ?? -1 : -1)
        } else if let colon = authority.lastIndex(of: ":") {
            host = String(authority[authority.startIndex..<colon])
            port = Int(authority[authority.index(after: colon)...]) ?? -1
        } else {
            host = String(authority)
            port = defaultPort
        }
        guard !host.isEmpty, host.count <= 255, !host.contains(where: { $0.isWhitespace || $0 == "/" }),
              (1...65535).contains(port) else { return nil }
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        let scalars = unicodeScalars
        guard let first = scalars.firstIndex(where: { !$0.properties.isWhitespace }),
              let last = scalars.lastIndex(where: { !$0.properties.isWhitespace }) else { return "" }
        return String(String.UnicodeScalarView(scalars[first...last]))
    }
}
