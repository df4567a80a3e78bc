import CowatchCore

/// Subtitles fetched through the server, for pages whose browser may not read a
/// track from its own server (a server without CORS: "Failed to fetch"). Pure:
/// which requests name a track (`/rooms/<room>/subtitles/<activity>/<track>`),
/// whether it is one of the room's current tracks (nothing else is fetched, so
/// the route is no open proxy), and whether what came back is a WebVTT file the
/// page may have. `SubtitleFetch.swift` fetches, with the link check's
/// protections; `Gateway+Subtitles.swift` holds the request meanwhile. The rules
/// are in docs/security.md ("Subtitles through the server").
enum SubtitleProxy {
    /// A page's request for one track of one activity of one room.
    struct Request: Hashable, Sendable {
        var room: RoomName
        var activity: String
        var track: String
    }

    /// Why a track is not served, said to the page in words.
    struct Refusal: Error, Hashable, Sendable {
        var status: UInt32
        var message: String
    }

    /// The path a page asks a track at: what `static/subtitles.js` builds.
    static func path(room: RoomName, activity: String, track: String) -> String {
        "/rooms/\(room)/subtitles/\(activity)/\(track)"
    }

    /// `/rooms/<room>/subtitles/<activity>/<track>`, or nil for any other path.
    static func request(path: String) -> Request? {
        let parts = path.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count == 6, parts[0].isEmpty, parts[1] == "rooms", parts[3] == "subtitles",
              let room = RoomName(String(parts[2])), isIdentifier(parts[4]), isIdentifier(parts[5]) else { return nil }
        return Request(room: room, activity: String(parts[4]), track: String(parts[5]))
    }

    /// Activity and track ids (`a12`, `s3`): a few of `A-Z a-z 0-9 . _ -`.
    private static func isIdentifier(_ text: Substring) -> Bool {
        !text.isEmpty && text.utf8.count <= 64 && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    /// The link of the asked track, when it is one of the current activity's
    /// tracks in a room this server runs; `state` is nil for any other room.
    static func source(_ request: Request, in state: RoomState?) -> Result<String, Refusal> {
        guard let state else {
            return .failure(Refusal(status: 404, message: "the room \(request.room) is not open on this server"))
        }
        guard let activity = state.session?.activity, state.session?.isActive == true, activity.id == request.activity else {
            return .failure(Refusal(status: 404, message: "that is not what the room \(request.room) is watching now"))
        }
        guard let track = activity.subtitles.first(where: { $0.id == request.track }) else {
            return .failure(Refusal(status: 404, message: "what the room \(request.room) is watching has no subtitle track \(request.track)"))
        }
        return .success(track.url.text)
    }

    /// Types a subtitle track may be served as: WebVTT's own, or plain text as
    /// many file servers call it. A `.vtt` path counts with a type that says
    /// nothing (`application/octet-stream`, none).
    static let textTypes: Set<String> = ["text/vtt", "text/plain"]

    /// The answer's head: nil when its body may be read (within `limit` bytes).
    static func headRefusal(status: Int, contentType: String?, path: String, contentLength: Int64?, limit: Int) -> Refusal? {
        guard (200...299).contains(status) else {
            let words = status == 404 || status == 410 ? " (not found): check the address given to /subtitles" : ""
            return Refusal(status: 502, message: "the subtitles' server answered \(status)\(words)")
        }
        let type = contentType.map(MediaCheck.mediaType) ?? ""
        let vague = type.isEmpty || MediaCheck.vagueTypes.contains(type)
        guard textTypes.contains(type) || (vague && MediaCheck.fileExtension(path) == "vtt") else {
            return Refusal(status: 502, message: "the subtitles' link serves \(type.isEmpty ? "something of no stated type" : type), "
                           + "not a WebVTT file (text/vtt, or a .vtt file)")
        }
        if let contentLength, contentLength > Int64(limit) {
            return tooLarge(limit)
        }
        return nil
    }

    static func tooLarge(_ limit: Int) -> Refusal {
        Refusal(status: 502, message: "the subtitles' file is larger than this server fetches (\(limit) bytes, max-subtitle-bytes)")
    }

    /// The whole body: a WebVTT file starts with `WEBVTT`, after an optional
    /// byte order mark, and is UTF-8 (WebVTT's only encoding).
    static func bodyRefusal(_ bytes: [UInt8]) -> Refusal? {
        let text = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? bytes.dropFirst(3) : bytes[...]
        guard text.starts(with: Array("WEBVTT".utf8)), String(validating: text, as: UTF8.self) != nil else {
            return Refusal(status: 502, message: "the subtitles' link does not serve a WebVTT file (it does not start with WEBVTT)")
        }
        return nil
    }

    /// What the page is answered: the file as `text/vtt`, or the refusal in words.
    static func response(_ result: Result<[UInt8], Refusal>) -> HTTPResponse {
        switch result {
        case .success(let bytes):
            return HTTPResponse(status: 200, contentType: "text/vtt; charset=utf-8", bytes: bytes)
        case .failure(let refusal):
            return HTTPResponse(status: refusal.status, contentType: "text/plain; charset=utf-8", body: refusal.message + "\n")
        }
    }
}
