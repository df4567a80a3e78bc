/// Where a shared link's media comes from, told by the link's form alone (the
/// server fetches nothing to decide): a media file any `<video>` can open, or one
/// video of a provider whose own player the page embeds.
///
/// The forms accepted are exactly those people copy from the providers' pages and
/// share buttons (docs/protocol.md, "Links"); every other page of those sites, and
/// sites that only ever serve web pages, are refused in words, since no player in a
/// room could play them and they would only replace what is playing with an error.
public enum MediaSource: Hashable, Sendable {
    /// A link to a media file (or a playlist of one: `.m3u8`, `.mpd`).
    case file
    /// A YouTube video by its id; `start` from `t=` or `start=`; `live` when the
    /// link is a `/live/` one (the player's first report decides for certain).
    case youtube(id: String, start: MediaTime?, live: Bool)
    /// A Vimeo video by its number; `start` from `#t=`.
    case vimeo(id: String, start: MediaTime?)
    /// A file each member picks on their own disk, matched by identity (`/watch own`).
    case own(OwnCopy)

    /// What a link is, or why it is refused (a sentence for the sender).
    public enum Classification: Hashable, Sendable {
        case accepted(MediaSource)
        case refused(String)

        /// The source, or nil when refused.
        public var source: MediaSource? {
            if case .accepted(let source) = self { source } else { nil }
        }
    }

    /// The `kind` of the activity's `source` on the wire.
    public var kind: String {
        switch self {
        case .file: "file"
        case .youtube: "youtube"
        case .vimeo: "vimeo"
        case .own: "own"
        }
    }

    /// The provider's id of the video; nil for a file.
    public var providerID: String? {
        switch self {
        case .file, .own: nil
        case .youtube(let id, _, _), .vimeo(let id, _): id
        }
    }

    /// Where the link asks playback to start.
    public var start: MediaTime? {
        switch self {
        case .file, .own: nil
        case .youtube(_, let start, _), .vimeo(_, let start): start
        }
    }

    /// The own copy the item is, if it is one.
    public var ownCopy: OwnCopy? {
        if case .own(let copy) = self { copy } else { nil }
    }

    /// Whether the link itself says the video is a live stream.
    public var isLiveLink: Bool {
        if case .youtube(_, _, true) = self { true } else { false }
    }

    /// The item's identity: the provider and its video id, so that two links to one
    /// video are one item; a file's is its URL; an own copy's its hash and size.
    public func identifier(for url: MediaURL) -> String {
        switch self {
        case .file: url.text
        case .own(let copy): copy.identifier
        case .youtube(let id, _, _): "youtube:\(id)"
        case .vimeo(let id, _): "vimeo:\(id)"
        }
    }

    /// What `url` is: a YouTube or Vimeo video, a file, or a page no player plays.
    public static func classify(_ url: MediaURL) -> Classification {
        let parts = LinkParts(url)
        if youTubeHosts.contains(parts.host) { return youTube(parts) }
        if parts.host == "youtu.be" { return youTubeShort(parts) }
        if youTubeNoCookieHosts.contains(parts.host) { return youTubeNoCookie(parts) }
        if vimeoHosts.contains(parts.host) { return vimeo(parts) }
        if parts.host == "player.vimeo.com" { return vimeoPlayer(parts) }
        if let site = pageOnlySite(parts.host) {
            return .refused("\(site) is a web page, not a video; Cowatch plays YouTube, Vimeo and links to media files")
        }
        return .accepted(.file)
    }

    // MARK: - YouTube

    static let youTubeHosts: Set<String> = ["youtube.com", "www.youtube.com", "m.youtube.com", "music.youtube.com"]
    static let youTubeNoCookieHosts: Set<String> = ["youtube-nocookie.com", "www.youtube-nocookie.com"]
    /// YouTube's own example of a shared link, quoted in refusals.
    static let youTubeExample = "youtube.com/watch?v=dQw4w9WgXcQ or youtu.be/dQw4w9WgXcQ"

    private static func youTube(_ parts: LinkParts) -> Classification {
        let segments = parts.segments
        guard let first = segments.first else {
            return .refused("that is YouTube's home page, not a video: share a video's link (\(youTubeExample))")
        }
        switch first.lowercased() {
        case "watch" where segments.count == 1, "playlist" where segments.count == 1:
            guard let id = parts.query("v") else {
                if parts.query("list") != nil { return playlistRefusal }
                return .refused("that YouTube link names no video (it has no v=): share a video's link (\(youTubeExample))")
            }
            return youTubeVideo(id, parts, live: false)
        case "shorts" where segments.count == 2, "live" where segments.count == 2, "embed" where segments.count == 2:
            if first.lowercased() == "embed" && segments[1] == "videoseries" { return playlistRefusal }
            return youTubeVideo(segments[1], parts, live: first.lowercased() == "live")
        case "channel", "c", "user":
            return channelRefusal
        case _ where first.hasPrefix("@"):
            return channelRefusal
        case "results", "search":
            return .refused("that is a YouTube search, not a video: share the link of one of the videos it finds")
        default:
            return .refused("that YouTube page is not a video: share a video's link (\(youTubeExample))")
        }
    }

    private static func youTubeShort(_ parts: LinkParts) -> Classification {
        guard parts.segments.count == 1, let id = parts.segments.first else {
            return .refused("that youtu.be link names no video: a shared video's link is youtu.be/ and the video's id")
        }
        return youTubeVideo(id, parts, live: false)
    }

    private static func youTubeNoCookie(_ parts: LinkParts) -> Classification {
        guard parts.segments.count == 2, parts.segments[0].lowercased() == "embed" else {
            return .refused("that youtube-nocookie.com page is not a video: share a video's link (\(youTubeExample))")
        }
        if parts.segments[1] == "videoseries" { return playlistRefusal }
        return youTubeVideo(parts.segments[1], parts, live: false)
    }

    private static let channelRefusal = Classification.refused(
        "that is a YouTube channel, not a video: share the link of one of its videos (\(youTubeExample))")
    private static let playlistRefusal = Classification.refused(
        "that YouTube playlist link names no video (it has list= but no v=): share one of its videos' links, and /queue the others")

    private static func youTubeVideo(_ id: Substring, _ parts: LinkParts, live: Bool) -> Classification {
        guard isYouTubeID(id) else {
            return .refused("\"\(excerpt(id, 20))\" is not a YouTube video id (11 letters, digits, - or _)")
        }
        let startText = parts.query("t") ?? parts.query("start")
        var start: MediaTime?
        if let startText {
            guard let seconds = startSeconds(startText) else { return startRefusal("t=", startText) }
            start = MediaTime(seconds: seconds)
        }
        return .accepted(.youtube(id: String(id), start: start, live: live))
    }

    /// 11 characters of YouTube's URL-safe alphabet.
    static func isYouTubeID(_ text: Substring) -> Bool {
        text.utf8.count == 11 && text.utf8.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2D || byte == 0x5F
        }
    }

    // MARK: - Vimeo

    static let vimeoHosts: Set<String> = ["vimeo.com", "www.vimeo.com"]
    static let vimeoExample = "vimeo.com/76979871"

    private static func vimeo(_ parts: LinkParts) -> Classification {
        let segments = parts.segments
        if segments.count == 1, isVimeoID(segments[0]) { return vimeoVideo(segments[0], parts) }
        if segments.count == 3, segments[0].lowercased() == "channels", isVimeoID(segments[2]) {
            return vimeoVideo(segments[2], parts)
        }
        return .refused("that Vimeo page is not one video: share a video's link (\(vimeoExample))")
    }

    private static func vimeoPlayer(_ parts: LinkParts) -> Classification {
        guard parts.segments.count == 2, parts.segments[0].lowercased() == "video", isVimeoID(parts.segments[1]) else {
            return .refused("that player.vimeo.com link is not a video's player: share a video's link (\(vimeoExample))")
        }
        return vimeoVideo(parts.segments[1], parts)
    }

    private static func vimeoVideo(_ id: Substring, _ parts: LinkParts) -> Classification {
        var start: MediaTime?
        if let startText = parts.fragmentValue("t") {
            guard let seconds = startSeconds(startText) else { return startRefusal("#t=", startText) }
            start = MediaTime(seconds: seconds)
        }
        return .accepted(.vimeo(id: String(id), start: start))
    }

    /// A video's number: 1 to 12 digits (Vimeo's are 8 to 10 today).
    static func isVimeoID(_ text: Substring) -> Bool {
        (1...12).contains(text.utf8.count) && text.utf8.allSatisfy { $0 >= 0x30 && $0 <= 0x39 }
    }

    // MARK: - Starting times

    private static func startRefusal(_ name: String, _ text: Substring) -> Classification {
        .refused("\(name)\(excerpt(text, 20)) is not a starting time (90, 90s, 1m30s, 1h2m3s)")
    }

    /// `90`, `90s`, `1m30s`, `1h2m3s`, `2m`: seconds, or nil. Hours, minutes and
    /// seconds come in that order, each at most once, at most 6 digits each, and
    /// the whole is within `ArgumentValues.maximumTimeSeconds`.
    public static func startSeconds(_ text: Substring) -> Double? {
        guard !text.isEmpty else { return nil }
        if let whole = ArgumentValues.wholeNumber(text, maximumDigits: 6) {
            let seconds = Double(whole)
            return seconds <= ArgumentValues.maximumTimeSeconds ? seconds : nil
        }
        let units: [(letter: UInt8, seconds: Double)] = [(UInt8(ascii: "h"), 3600), (UInt8(ascii: "m"), 60), (UInt8(ascii: "s"), 1)]
        var rest = text.utf8[...]
        var total = 0.0
        var nextUnit = 0
        while !rest.isEmpty {
            let digits = rest.prefix { $0 >= 0x30 && $0 <= 0x39 }
            rest = rest.dropFirst(digits.count)
            // ASCII letters only: `| 0x20` lowercases A-Z and nothing else matches.
            guard let value = ArgumentValues.wholeNumber(Substring(digits), maximumDigits: 6), let unit = rest.first,
                  let index = units[nextUnit...].firstIndex(where: { $0.letter == unit | 0x20 })
            else { return nil }
            total += Double(value) * units[index].seconds
            nextUnit = index + 1
            rest = rest.dropFirst()
            if nextUnit == units.count && !rest.isEmpty { return nil }
        }
        return total <= ArgumentValues.maximumTimeSeconds ? total : nil
    }

    // MARK: - Sites that serve only pages

    /// Sites whose links are pages around a player of their own that Cowatch has
    /// no adapter for: refused by name rather than shared to fail on every page.
    static let pageOnlySites: [String: String] = [
        "twitch.tv": "Twitch", "dailymotion.com": "Dailymotion", "dai.ly": "Dailymotion",
        "tiktok.com": "TikTok", "facebook.com": "Facebook", "fb.watch": "Facebook", "instagram.com": "Instagram",
        "twitter.com": "Twitter", "x.com": "X", "bilibili.com": "Bilibili", "rumble.com": "Rumble", "kick.com": "Kick",
        "soundcloud.com": "SoundCloud", "open.spotify.com": "Spotify", "netflix.com": "Netflix",
    ]
    /// The subdomains of those sites that are their pages (their media come from
    /// other hosts, which stay allowed).
    static let pageSubdomains = ["www.", "m.", "mobile.", "clips.", "player.", "go.", "vm."]

    static func pageOnlySite(_ host: String) -> String? {
        if let name = pageOnlySites[host] { return "a \(name) link" }
        for prefix in pageSubdomains where host.hasPrefix(prefix) {
            if let name = pageOnlySites[String(host.dropFirst(prefix.count))] { return "a \(name) link" }
        }
        return nil
    }
}

/// A URL's parts as the classification reads them: the host (lowercased, without
/// port or a final dot), the path's non-empty segments, the query's pairs, the fragment.
struct LinkParts {
    let host: String
    let segments: [Substring]
    let queryPairs: [(key: Substring, value: Substring)]
    let fragment: Substring

    init(_ url: MediaURL) {
        var host = url.host
        if host.hasSuffix(".") { host.removeLast() }
        self.host = host
        let afterScheme = url.text.drop { $0 != ":" }.dropFirst().drop { $0 == "/" }
        let fromPath = afterScheme.drop { $0 != "/" && $0 != "?" && $0 != "#" }
        let path = fromPath.prefix { $0 != "?" && $0 != "#" }
        segments = path.split(separator: "/")
        let afterPath = fromPath.dropFirst(path.count)
        let query = afterPath.first == "?" ? afterPath.dropFirst().prefix { $0 != "#" } : afterPath.prefix(0)
        queryPairs = Self.pairs(query, separator: "&")
        let hash = afterPath.firstIndex(of: "#")
        fragment = hash.map { afterPath[afterPath.index(after: $0)...] } ?? afterPath.suffix(0)
    }

    /// The first value of a query parameter, in whatever order the parameters come.
    func query(_ key: String) -> Substring? {
        queryPairs.first { $0.key == key }?.value
    }

    /// `#t=62` (a fragment may also hold several `&`-separated pairs).
    func fragmentValue(_ key: String) -> Substring? {
        Self.pairs(fragment, separator: "&").first { $0.key == key }?.value
    }

    static func pairs(_ text: Substring, separator: Character) -> [(key: Substring, value: Substring)] {
        text.split(separator: separator).map { pair in
            let equals = pair.firstIndex(of: "=") ?? pair.endIndex
            let value = equals == pair.endIndex ? pair.suffix(0) : pair[pair.index(after: equals)...]
            return (pair[..<equals], value)
        }
    }
}
