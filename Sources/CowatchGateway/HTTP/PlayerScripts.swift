import Foundation

/// Where the page loads each provider's player API from (settings
/// `youtube-api-url`, `vimeo-api-url`), and what that lets the page load.
///
/// The page's Content-Security-Policy allows scripts and frames from this
/// server and from exactly the origins of these URLs: a provider's API script
/// comes from its origin, and so do the widget script it loads and the player
/// frame it drives (YouTube's `iframe_api` loads `www-widgetapi.js` and embeds
/// `/embed/ID`, both on www.youtube.com; Vimeo's `player.js` drives
/// `player.vimeo.com/video/ID`). The room page is told the URLs in
/// `<meta name="cowatch-player-api" data-kind="youtube" content="...">`.
public struct PlayerScripts: Sendable, Equatable {
    public static let defaultYouTube = "https://www.youtube.com/iframe_api"
    public static let defaultVimeo = "https://player.vimeo.com/api/player.js"

    /// Source kind (as in `activity.source.kind`) to the API script's URL.
    public private(set) var urls: [String: String]

    public init(youtube: String = PlayerScripts.defaultYouTube, vimeo: String = PlayerScripts.defaultVimeo) {
        urls = ["youtube": youtube, "vimeo": vimeo]
    }

    /// Sets `kind`'s script, checked by `problem(with:)`.
    public mutating func set(_ kind: String, _ url: String) throws(PlayerScriptError) {
        if let problem = Self.problem(with: url) { throw PlayerScriptError(message: problem) }
        urls[kind] = url
    }

    /// The origins the policy names, in a stable order, each once.
    public var origins: [String] {
        var seen: [String] = []
        for kind in urls.keys.sorted() {
            if let url = urls[kind], let origin = Self.origin(of: url), !seen.contains(origin) { seen.append(origin) }
        }
        return seen
    }

    /// Why `url` cannot be a player's script, or nil. It goes into a header
    /// and an HTML attribute, so it is held to a plain form: http or https, a
    /// host, a path; no user, no quotes, spaces, commas or semicolons.
    public static func problem(with url: String) -> String? {
        guard origin(of: url) != nil else {
            return "expected an address such as https://www.youtube.com/iframe_api (http or https, a host, a path)"
        }
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~:/?#[]@!$&()*+=%")
        guard url.allSatisfy({ allowed.contains($0) }), !url.contains("'") else {
            return "the address may hold only letters, digits and - . _ ~ : / ? # [ ] @ ! $ & ( ) * + = %"
        }
        return nil
    }

    /// `scheme://host[:port]` of an http(s) URL with a host and no user part.
    static func origin(of url: String) -> String? {
        let lowered = url.lowercased()
        let scheme: String
        if lowered.hasPrefix("https://") {
            scheme = "https"
        } else if lowered.hasPrefix("http://") {
            scheme = "http"
        } else {
            return nil
        }
        let rest = url.dropFirst(scheme.count + 3)
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard !authority.isEmpty, !authority.contains("@"), rest.count > authority.count else { return nil }
        let hostAndPort = authority.lowercased()
        let host = hostAndPort.hasPrefix("[") ? hostAndPort : String(hostAndPort.prefix { $0 != ":" })
        guard !host.isEmpty, host.allSatisfy({ $0.isLetter || $0.isNumber || "-.[]:".contains($0) }) else { return nil }
        if let colon = hostAndPort.lastIndex(of: ":"), !hostAndPort.hasSuffix("]") {
            guard let port = Int(hostAndPort[hostAndPort.index(after: colon)...]), (1...65535).contains(port) else { return nil }
        }
        return "\(scheme)://\(hostAndPort)"
    }

    /// The page's Content-Security-Policy: this server's own scripts and frames
    /// plus the players' origins.
    public var contentSecurityPolicy: String {
        let list = origins.joined(separator: " ")
        let scripts = origins.isEmpty ? "'self'" : "'self' " + list
        let frames = origins.isEmpty ? "'none'" : list
        return "default-src 'self'; script-src \(scripts); style-src 'self'; img-src 'self' data: blob:; "
            + "media-src * data: blob:; connect-src 'self' ws: wss: http: https:; frame-src \(frames); "
            + "frame-ancestors 'self'; base-uri 'none'; form-action 'self'; object-src 'none'"
    }

    /// The room page with each `<meta name="cowatch-player-api" data-kind="K" content="">`
    /// filled with kind K's URL (escaped for the attribute).
    func fill(_ page: [UInt8]) -> [UInt8] {
        var text = String(decoding: page, as: UTF8.self)
        for kind in urls.keys.sorted() {
            guard let url = urls[kind] else { continue }
            let escaped = url.replacingOccurrences(of: "&", with: "&amp;")
            text = text.replacingOccurrences(of: "data-kind=\"\(kind)\" content=\"\"", with: "data-kind=\"\(kind)\" content=\"\(escaped)\"")
        }
        return Array(text.utf8)
    }
}

public struct PlayerScriptError: Error, Equatable {
    public let message: String
}
