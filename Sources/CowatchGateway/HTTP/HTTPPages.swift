import Foundation
import CowatchCore
import CowatchWeb
import SlashCommands

struct HTTPResponse {
    var status: UInt32
    var contentType: String
    var body: [UInt8]
    /// Header lines beyond the common ones (`name: value`).
    var headers: [String] = []
    /// The connection is closed after this response rather than kept for another.
    var close = false

    init(status: UInt32, contentType: String, body: String) {
        self.init(status: status, contentType: contentType, bytes: Array(body.utf8))
    }

    init(status: UInt32, contentType: String, bytes: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.body = bytes
    }

    init(_ file: WebRoot.File) {
        self.init(status: 200, contentType: file.contentType, bytes: file.body)
    }

    /// Sent with every response. The page runs only the scripts and styles this
    /// server serves, and the players' API scripts from the origins the
    /// settings name (no inline script, so an injected tag cannot run); it
    /// frames only those players (PlayerScripts); it may be framed only by this
    /// server's own pages (another site framing it could otherwise lure a host
    /// into clicking its buttons), and sends no referrer, since room addresses
    /// can carry owner keys and invites. Media and subtitles come from wherever
    /// a room shares them (`media-src *`, `connect-src` for subtitle files);
    /// the page's own WebSocket is `'self'`.
    static func securityHeaders(_ players: PlayerScripts) -> [String] {
        [
            "content-security-policy: " + players.contentSecurityPolicy,
            "x-frame-options: SAMEORIGIN",
            "x-content-type-options: nosniff",
            "referrer-policy: no-referrer",
        ]
    }

    static func text(_ status: UInt32, _ message: String) -> HTTPResponse {
        HTTPResponse(status: status, contentType: "text/plain; charset=utf-8", body: message + "\n")
    }
}

extension Gateway {
    /// Plain HTTP: health, metrics, and the pages that tell people how to join.
    func httpResponse(for path: String, host: String?) -> HTTPResponse {
        switch path {
        case "/healthz":
            metrics.httpRequests["healthz", default: 0] += 1
            return HTTPResponse(status: 200, contentType: "text/plain; charset=utf-8", body: "ok" + clusterHealth())
        case "/metrics":
            metrics.httpRequests["metrics", default: 0] += 1
            let gauges = GatewayMetrics.Gauges(
                connections: connections.count, rooms: rooms.count,
                members: rooms.values.reduce(0) { $0 + $1.connections.count }, timers: state.timers.count,
                storeFailures: store?.failedWrites ?? 0, storePending: store?.pendingChanges ?? 0)
            return HTTPResponse(status: 200, contentType: "text/plain; version=0.0.4; charset=utf-8",
                                body: metrics.render(gauges) + clusterMetrics() + (configuration.moreMetrics?() ?? ""))
        case "/rooms.json":
            metrics.httpRequests["listing", default: 0] += 1
            return publicRooms()
        case "/", "/index.html":
            metrics.httpRequests["landing", default: 0] += 1
            if let file = web.file("/index.html") { return HTTPResponse(file) }
            return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8", body: HTTPPages.landing(port: server?.port ?? configuration.port))
        default:
            if path.hasPrefix("/static/") {
                metrics.httpRequests["static", default: 0] += 1
                if let file = web.file(path) { return HTTPResponse(file) }
                return HTTPResponse(status: 404, contentType: "text/plain; charset=utf-8", body: "not found\n")
            }
            guard path.hasPrefix("/rooms/") else {
                metrics.httpRequests["not-found", default: 0] += 1
                return HTTPResponse(status: 404, contentType: "text/plain; charset=utf-8", body: "not found\n")
            }
            guard let room = RoomName(String(path.dropFirst("/rooms/".count))) else {
                metrics.httpRequests["bad-room", default: 0] += 1
                return HTTPResponse(status: 400, contentType: "text/plain; charset=utf-8",
                                    body: "a room name is 1 to 64 characters of A-Z a-z 0-9 . _ -\n")
            }
            metrics.httpRequests["room", default: 0] += 1
            if let file = web.file("/room.html") {
                return HTTPResponse(status: 200, contentType: file.contentType, bytes: configuration.playerScripts.fill(file.body))
            }
            return HTTPResponse(status: 200, contentType: "text/html; charset=utf-8",
                                body: HTTPPages.room(room, members: rooms[room]?.connections.count ?? 0,
                                                    host: host ?? "HOST:PORT"))
        }
    }
}

/// Pages for when the browser client's files cannot be found (a binary copied
/// without its resources): how to join a room with the terminal client.
enum HTTPPages {
    // No script and no inline style here: the pages are served under the same
    // Content-Security-Policy as the browser client's (HTTPResponse.securityHeaders(_:)).
    static func landing(port: Int) -> String {
        page(title: "Cowatch", body: """
        <h1>Cowatch</h1>
        <p>Watch videos together, in sync. A room is at <code>/rooms/NAME</code>, where NAME is
        1 to 64 letters, digits, <code>.</code>, <code>_</code> or <code>-</code>: for example
        <a href="/rooms/movie-night">/rooms/movie-night</a>.</p>
        <p>From a terminal: <code>cowatch connect ws://HOST:\(port)/rooms/movie-night --name alice</code>,
        then type <code>/help</code>.</p>
        """)
    }

    static func room(_ room: RoomName, members: Int, host: String) -> String {
        let here = members == 1 ? "1 member is" : "\(members) members are"
        let commands = CommandTable.specs.map { "<li><code>\(escape($0.usage))</code> \(escape($0.summary))</li>" }.joined(separator: "\n")
        return page(title: "\(room) - Cowatch", body: """
        <h1>Room <code>\(room)</code></h1>
        <p>\(here) connected right now.</p>
        <p>Join from a terminal:</p>
        <pre>cowatch connect ws://\(escape(host))/rooms/\(room) --name alice</pre>
        <p>Or any WebSocket client: connect to this address with subprotocol <code>cowatch.v1.text</code>
        (lines for people) or <code>cowatch.v1.json</code> (one JSON object per event), and send lines:</p>
        <ul>\(commands)</ul>
        """)
    }

    private static func page(title: String, body: String) -> String {
        """
        <!doctype html>
        <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
        <title>\(escape(title))</title>
        </head><body>
        \(body)
        </body></html>
        """
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "&": out += "&amp;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}

extension Gateway {
    /// The rooms their hosts listed (`/public on`), most watched first: what is
    /// playing and how many are watching, for the landing page. Locked rooms and
    /// rooms with a password are not shown; at most `publicListingLimit`.
    func publicRooms() -> HTTPResponse {
        let listed = rooms.values
            .filter { $0.room.isShownInListing }
            .sorted { ($0.connections.count, $1.room.name.rawValue) > ($1.connections.count, $0.room.name.rawValue) }
            .prefix(Self.publicListingLimit)
            .map { entry -> [String: Any] in
                let state = entry.room.state
                return ["name": entry.room.name.rawValue, "watching": entry.connections.count,
                        "title": state.session?.isActive == true ? state.session?.activity.title as Any : NSNull(),
                        "status": state.playback.status.rawValue]
            }
        return Self.json(200, ["rooms": Array(listed)])
    }

    static let publicListingLimit = 100
}
