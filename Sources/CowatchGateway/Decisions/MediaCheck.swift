import CowatchTime
import Foundation

/// Whether a link shared with `/watch` or `/queue` serves media, judged from the
/// answer to one bounded request (`MediaProbe.swift` makes it). Pure: the status
/// and headers in, a verdict out. The rules are in docs/security.md ("What may be
/// shared").
public enum MediaCheck {
    public struct Settings: Sendable, Hashable {
        /// Off: links are shared without a look.
        public var enabled: Bool
        /// Whether the server may visit links on private, loopback and link-local
        /// addresses (a home server sharing files from the same network). Off, such
        /// links are shared unchecked, with a word to the sender.
        public var allowPrivateAddresses: Bool
        /// For the whole check, redirects included.
        public var timeout: MonotonicDuration
        public var maximumRedirects: Int
        /// Checks in flight at once, over all rooms; beyond them links go unchecked.
        public var maximumConcurrent: Int
        /// Checks in flight for one client address; beyond them its links are
        /// refused (`rate-limited`) until one is done.
        public var maximumPerAddress: Int
        /// The largest subtitle file fetched for a page (`SubtitleFetch.swift`),
        /// in bytes. The other bounds of those fetches are the ones above:
        /// addresses, the timeout, redirects, and as many in flight at once (in
        /// all, and per client address) as there may be checks.
        public var maximumSubtitleBytes: Int

        public init(enabled: Bool = false, allowPrivateAddresses: Bool = false, timeout: MonotonicDuration = .seconds(4),
                    maximumRedirects: Int = 3, maximumConcurrent: Int = 16,
                    maximumPerAddress: Int = 2, maximumSubtitleBytes: Int = 1_048_576) {
            self.maximumSubtitleBytes = maximumSubtitleBytes
            self.enabled = enabled
            self.allowPrivateAddresses = allowPrivateAddresses
            self.timeout = timeout
            self.maximumRedirects = maximumRedirects
            self.maximumConcurrent = maximumConcurrent
            self.maximumPerAddress = maximumPerAddress
        }
    }

    public enum Verdict: Sendable, Hashable {
        /// It serves audio or video (or a playlist of them).
        case media
        /// It serves audio or video, but its server sends the whole file when
        /// asked for a part (no HTTP range requests), so that no browser can seek
        /// in it: shared, and the sender is told why seeking will not work.
        case mediaWithoutSeeking(String)
        /// It certainly does not: the message says what it is instead.
        case notMedia(String)
        /// It could not be told: shared anyway, and the sender is told why.
        case unchecked(String)

        var label: String {
            switch self {
            case .media: "media"
            case .mediaWithoutSeeking: "media-no-ranges"
            case .notMedia: "not-media"
            case .unchecked: "unchecked"
            }
        }
    }

    /// Content types browsers play in `<video>`, or playlists of them.
    static let playlistTypes: Set<String> = [
        "application/vnd.apple.mpegurl", "application/x-mpegurl", "audio/mpegurl", "audio/x-mpegurl",
        "application/dash+xml", "application/ogg", "application/mp4",
    ]
    /// Types that say nothing (a file is a file): the link's extension decides.
    static let vagueTypes: Set<String> = ["application/octet-stream", "binary/octet-stream", "application/binary"]
    static let mediaExtensions: Set<String> = [
        "mp4", "m4v", "webm", "mkv", "mov", "ogv", "ogg", "oga", "mp3", "m4a", "aac", "flac", "wav", "opus", "m3u8", "mpd", "ts",
    ]

    /// Why seeking fails in a file whose server has no range requests.
    static let noRangesReason = "its server sent the whole file when the check asked for its first kilobyte "
        + "(200 OK, not 206 Partial Content), so it does not serve parts of files (HTTP range requests) "
        + "and browsers cannot seek in it: /seek, and anyone joining late, would start it from the beginning. "
        + "A web server with range requests fixes that (nginx, Apache and Caddy have them; python3 -m http.server does not)"

    /// `status` answers the probe's `Range: bytes=0-1023`: 206 when the server
    /// serves parts of files, 200 with the whole file when it does not.
    public static func verdict(status: Int, contentType: String?, path: String) -> Verdict {
        let verdict = kind(status: status, contentType: contentType, path: path)
        guard verdict == .media, status == 200, !isPlaylist(contentType: contentType, path: path) else { return verdict }
        return .mediaWithoutSeeking(noRangesReason)
    }

    /// A playlist's segments are fetched whole, and a player seeks by choosing
    /// among them: its own server needs no range requests.
    static func isPlaylist(contentType: String?, path: String) -> Bool {
        let type = contentType.map(mediaType) ?? ""
        let named = ["m3u8", "mpd"].contains(fileExtension(path))
        return named || (playlistTypes.contains(type) && type != "application/ogg" && type != "application/mp4")
    }

    private static func kind(status: Int, contentType: String?, path: String) -> Verdict {
        switch status {
        case 200...299:
            break
        case 404, 410:
            return .notMedia("that link answered \(status) (\(status == 404 ? "not found" : "gone")): check the address")
        case 401, 403:
            return .unchecked("the server behind it answered \(status) and may let only some people in")
        case 300...399:
            return .unchecked("it redirects too often or to an address this server does not visit")
        default:
            return .unchecked("the server behind it answered \(status)")
        }
        let type = contentType.map(mediaType) ?? ""
        if type.hasPrefix("video/") || type.hasPrefix("audio/") || playlistTypes.contains(type) { return .media }
        if type.isEmpty || vagueTypes.contains(type) {
            return mediaExtensions.contains(fileExtension(path)) ? .media
                : .unchecked("its server does not say what it is (\(type.isEmpty ? "no content type" : type))")
        }
        if type == "text/html" || type == "application/xhtml+xml" {
            return .notMedia("that link is a web page (\(type)), not a video: share the address of the video file itself (.mp4, .webm, .m3u8...)")
        }
        let kind = type.hasPrefix("image/") ? "an image" : type.hasPrefix("text/") ? "text" : "not a video"
        return .notMedia("that link serves \(type), \(kind == "not a video" ? kind : kind + ", not a video"): share the address of a video or audio file")
    }

    /// `video/mp4; codecs=...` → `video/mp4`, lowercased.
    static func mediaType(_ header: String) -> String {
        let bare = header.split(separator: ";", maxSplits: 1).first.map(String.init) ?? ""
        return bare.trimmingCharacters(in: .whitespaces).lowercased()
    }

    static func fileExtension(_ path: String) -> String {
        let bare = path.split(separator: "?", maxSplits: 1).first.map(String.init) ?? path
        guard let last = bare.split(separator: "/").last, let dot = last.lastIndex(of: ".") else { return "" }
        return last[last.index(after: dot)...].lowercased()
    }

    /// Whether an address (4 bytes for IPv4, 16 for IPv6) is on the public
    /// Internet: not loopback, private (RFC 1918, unique local), link-local, shared
    /// (100.64/10), unspecified, multicast, documentation or reserved; IPv4 mapped
    /// into IPv6 is judged as IPv4.
    public static func isPublic(_ address: [UInt8]) -> Bool {
        if address.count == 4 { return isPublicIPv4(address) }
        guard address.count == 16 else { return false }
        if address[0..<10].allSatisfy({ $0 == 0 }) && address[10] == 0xFF && address[11] == 0xFF {
            return isPublicIPv4(Array(address[12..<16]))
        }
        if address[0..<15].allSatisfy({ $0 == 0 }) { return false } // :: and ::1
        if address[0] & 0xFE == 0xFC { return false }               // fc00::/7 unique local
        if address[0] == 0xFE && address[1] & 0xC0 == 0x80 { return false } // fe80::/10 link-local
        if address[0] == 0xFF { return false }                      // multicast
        if address[0] == 0x20 && address[1] == 0x01 && address[2] == 0x0D && address[3] == 0xB8 { return false } // documentation
        if address[0] == 0x00 && address[1] == 0x64 && address[2] == 0xFF && address[3] == 0x9B { // 64:ff9b::/96 NAT64
            return isPublicIPv4(Array(address[12..<16]))
        }
        return true
    }

    static func isPublicIPv4(_ a: [UInt8]) -> Bool {
        switch (a[0], a[1]) {
        case (0, _), (10, _), (127, _): return false
        case (100, 64...127): return false          // shared address space
        case (169, 254): return false               // link-local
        case (172, 16...31): return false
        case (192, 168): return false
        case (192, 0) where a[2] == 0 || a[2] == 2: return false // IETF, documentation
        case (198, 18...19): return false           // benchmarking
        case (198, 51) where a[2] == 100: return false
        case (203, 0) where a[2] == 113: return false
        case (224...255, _): return false           // multicast, reserved, broadcast
        default: return true
        }
    }
}
