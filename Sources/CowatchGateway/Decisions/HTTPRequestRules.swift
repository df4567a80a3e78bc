import Foundation

/// What the server makes of a plain HTTP request before any route sees it, per
/// RFC 9110 and RFC 9112 for what it serves: the method, the exact path, the
/// `Host` it was asked under and how the message is framed. Pure: the request's
/// head in, a refusal (or nothing) out; `LWSServer+Callbacks.swift` reads the head
/// from libwebsockets and carries the answer out.
struct HTTPRequestHead: Sendable, Equatable {
    enum Method: String, Sendable, CaseIterable {
        case get = "GET", post = "POST", options = "OPTIONS", put = "PUT", patch = "PATCH", delete = "DELETE"
        case connect = "CONNECT", head = "HEAD"
    }

    /// Nil when the request named no method the parser knows.
    var method: Method?
    /// The path as libwebsockets gives it, which stops at the first `;` or `&`.
    var path: String
    /// Whether the request's target went on past `path` with `;` or `&`
    /// (`/metrics;x`): libwebsockets splits the target there, so the route would
    /// see `/metrics` while a proxy's rules saw `/metrics;x`.
    var pathContinues: Bool
    /// Every `Host` header field line's value, in order.
    var hosts: [String]
    var http10: Bool
    /// Every `Content-Length` field line's value, in order.
    var contentLengths: [String]
    var transferEncoding: Bool
}

enum HTTPRequestRules {
    /// The decision for one request: refused with a response (and the connection
    /// closed after it when `close`), or served by the routes.
    struct Refusal: Equatable {
        var status: UInt32
        var message: String
        /// The methods the path allows, for a 405.
        var allow: String?
        var close: Bool
    }

    /// Whether `path` is the admin API's, which alone takes POST.
    static func isAdmin(_ path: String) -> Bool { path == "/admin" || path.hasPrefix("/admin/") }

    static func allowedMethods(for path: String) -> [HTTPRequestHead.Method] {
        isAdmin(path) ? [.get, .head, .post] : [.get, .head]
    }

    static func refusal(_ head: HTTPRequestHead, hosts allowlist: HostAllowlist) -> Refusal? {
        // A message whose length cannot be told for certain is where one request
        // hides inside another (RFC 9112, section 6.3): answered, and the
        // connection closed, since what follows it cannot be trusted.
        if head.contentLengths.count > 1 {
            return Refusal(status: 400, message: "a request carries one Content-Length", allow: nil, close: true)
        }
        if head.transferEncoding && !head.contentLengths.isEmpty {
            return Refusal(status: 400, message: "a request carries Content-Length or Transfer-Encoding, not both", allow: nil, close: true)
        }
        if let length = head.contentLengths.first, UInt64(trimmed(length)) == nil {
            return Refusal(status: 400, message: "Content-Length is a whole number", allow: nil, close: true)
        }
        if head.hosts.count > 1 {
            return Refusal(status: 400, message: "a request carries one Host", allow: nil, close: true)
        }
        guard let host = head.hosts.first else {
            if head.http10 { return bodyRefusal(head) ?? methodRefusal(head) }
            return Refusal(status: 400, message: "an HTTP/1.1 request names its Host", allow: nil, close: true)
        }
        if !allowlist.allows(host) {
            return Refusal(status: 421, message: "this server does not answer for \(String(host.prefix(100))); "
                           + "its operator lists the names it serves in allowed-hosts", allow: nil, close: true)
        }
        return bodyRefusal(head) ?? methodRefusal(head)
    }

    /// Nothing the server serves takes a request body, and one left unread would
    /// be parsed as the next request: refused, and the connection closed.
    private static func bodyRefusal(_ head: HTTPRequestHead) -> Refusal? {
        let length = head.contentLengths.first.flatMap { UInt64(trimmed($0)) } ?? 0
        guard head.transferEncoding || length > 0 else { return nil }
        return Refusal(status: 413, message: "this server takes no request bodies", allow: nil, close: true)
    }

    private static func methodRefusal(_ head: HTTPRequestHead) -> Refusal? {
        guard let method = head.method else {
            return Refusal(status: 400, message: "the request names no method this server knows", allow: nil, close: true)
        }
        let allowed = allowedMethods(for: head.path)
        guard allowed.contains(method) else {
            let names = allowed.map(\.rawValue).joined(separator: ", ")
            return Refusal(status: 405, message: "\(head.path.prefix(100)) answers \(names) only", allow: names, close: false)
        }
        if head.pathContinues {
            return Refusal(status: 404, message: "not found", allow: nil, close: false)
        }
        return nil
    }

    private static func trimmed(_ text: String) -> String {
        String(text.drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}

/// The names a request's `Host` may give (RFC 9110, section 7.2): a page served
/// under another name is what DNS rebinding makes of a stranger's site, whose
/// `Origin` then matches the `Host` it sends. Addresses written as such cannot
/// be rebound and always pass, as does `localhost`; names pass when the operator
/// lists them (`allowed-hosts`), or they are the host of an allowed origin or of
/// this node's advertised address.
public struct HostAllowlist: Sendable, Equatable {
    /// Lower-case names; `*.example.org` allows every name under it, `*` any.
    var names: [String]

    public init(names: [String]) {
        self.names = names.map { $0.lowercased() }
    }

    public func allows(_ hostHeader: String) -> Bool {
        guard let host = Self.hostPart(hostHeader) else { return false }
        if Self.isAddress(host) || host == "localhost" || host.hasSuffix(".localhost") { return true }
        return names.contains { name in
            name == "*" || name == host || (name.hasPrefix("*.") && host.hasSuffix(name.dropFirst()))
        }
    }

    /// The host of a `Host` field value, lower case, without its port; nil when
    /// the value is not a host (RFC 3986's reg-name, IPv4 or a bracketed IPv6).
    public static func hostPart(_ value: String) -> String? {
        let text = value.trimmingCharacters(in: [" ", "\t"]).lowercased()
        guard !text.isEmpty, text.utf8.count <= 255 else { return nil }
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { return nil }
            let rest = text[text.index(after: close)...]
            guard rest.isEmpty || (rest.hasPrefix(":") && isPort(rest.dropFirst())) else { return nil }
            let inside = text[text.index(after: text.startIndex)..<close]
            guard !inside.isEmpty, inside.allSatisfy({ $0.isHexDigit || $0 == ":" || $0 == "." }) else { return nil }
            return String(text[...close])
        }
        let parts = text.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count <= 2, let name = parts.first, !name.isEmpty else { return nil }
        if parts.count == 2, !isPort(parts[1]) { return nil }
        guard name.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == ".") }) else { return nil }
        return String(name)
    }

    static func isAddress(_ host: String) -> Bool {
        if host.hasPrefix("[") { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts.allSatisfy { UInt8($0) != nil }
    }

    private static func isPort(_ text: Substring) -> Bool {
        !text.isEmpty && text.count <= 5 && text.allSatisfy(\.isASCII) && UInt16(text) != nil
    }
}
