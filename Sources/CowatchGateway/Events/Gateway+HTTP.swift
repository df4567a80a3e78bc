import CowatchConnection

/// A plain HTTP request as the libwebsockets layer reads it: its head, and
/// what the admin API and the limits per address need of it.
struct HTTPRequestEvent {
    var head: HTTPRequestHead
    var path: String
    /// From `Authorization: Bearer`.
    var token: String?
    /// The client's address (`Gateway.clientAddress`).
    var address: String
    /// The request's query parameters, by name.
    var arguments: (String) -> String?
    /// The number the request is held under if its answer comes later.
    var id: UInt64
}

/// What becomes of a plain HTTP request.
enum HTTPAnswer {
    case respond(HTTPResponse)
    /// Answered once a fetch is done (`LWSServer.answerDeferred`); the request is
    /// given up after `timeoutSeconds`.
    case later(timeoutSeconds: Int32)
}

extension Gateway {
    /// Every plain HTTP request: refused by `HTTPRequestRules`, the admin API,
    /// a subtitle track fetched for the page, or a page.
    func httpRequested(_ request: HTTPRequestEvent) -> HTTPAnswer {
        if let refusal = HTTPRequestRules.refusal(request.head, hosts: state.settings.hosts) {
            httpRefused(status: refusal.status)
            var response = HTTPResponse.text(refusal.status, refusal.message)
            if let allow = refusal.allow { response.headers.append("allow: \(allow)") }
            response.close = refusal.close
            return .respond(response)
        }
        if HTTPRequestRules.isAdmin(request.path) {
            return adminAnswer(AdminRequest(post: request.head.method == .post, path: request.path,
                                            token: request.token, address: request.address,
                                            arguments: request.arguments), id: request.id)
        }
        if let subtitles = SubtitleProxy.request(path: request.path) {
            switch subtitleRequest(subtitles, id: request.id, address: request.address) {
            case .now(let response):
                return .respond(response)
            case .later:
                // The fetch ends within its own timeout; the request is given a little longer.
                return .later(timeoutSeconds: Int32(configuration.mediaCheck.timeout.seconds.rounded(.up)) + 5)
            }
        }
        return .respond(httpResponse(for: request.path, host: request.head.hosts.first))
    }

    /// A frame came unmasked from a client (`CFrameGuard` saw it): the connection
    /// is failed with 1002 (RFC 6455, 5.1), and nothing more it sends is read.
    func unmaskedFrame(on connection: Connection) {
        if connection.state.isOpen {
            close(connection, code: 1002, reason: "a client's frames must be masked")
        }
    }
}
