import SlashCommands

/// The file given to `cowatch watch ROOM FILE`, known by the identity the room
/// matches own copies by (docs/protocol.md, "Own copies"): its size and its
/// OpenSubtitles hash, and the length mpv reads once it has loaded it. The
/// file's name plays no part: a renamed copy is the same file.
public struct LocalCopy: Sendable, Hashable {
    public var path: String
    public var hash: UInt64
    public var size: Int64

    /// Two players read one file's length differently by a few frames (the
    /// page allows the same, static/sync/own-copy.js).
    public static let durationTolerance = 1.0

    public init(path: String, hash: UInt64, size: Int64) {
        self.path = path
        self.hash = hash
        self.size = size
    }

    /// The file from its size and the bytes at `OwnCopy.hashRanges(size:)`.
    public init(path: String, size: Int64, head: [UInt8], tail: [UInt8]) {
        self.init(path: path, hash: OwnCopy.hash(size: size, head: head, tail: tail), size: size)
    }

    public var identifier: String { OwnCopy.identifier(hash: hash, size: size) }

    /// Why this file is not the room's item, known without playing it (size
    /// first, then contents); nil when both match.
    public func refusal(of item: OwnCopy) -> String? {
        if size != item.size {
            // Sizes that round alike are told in bytes, so that the two numbers differ.
            let alike = OwnCopy.sizeText(size) == OwnCopy.sizeText(item.size)
            let words = { (bytes: Int64) in alike ? "\(bytes) bytes" : OwnCopy.sizeText(bytes) }
            return "another file: yours has \(words(size)), the room's has \(words(item.size))"
        }
        if hash != item.hash { return "another file: the same size, but other contents" }
        return nil
    }

    /// Why a file of this length is not the room's item of `expected` seconds; nil
    /// when they agree within `durationTolerance`.
    public static func durationRefusal(_ duration: Double, expected: Double) -> String? {
        guard abs(duration - expected) > durationTolerance else { return nil }
        return "another duration: yours lasts \(MediaTime(seconds: duration).clockText), "
            + "the room's lasts \(MediaTime(seconds: expected).clockText)"
    }

    /// What a player without the file is told: what to start it with.
    public static func askText(_ item: OwnCopy, title: String, duration: Double?) -> String {
        let what = "\(OwnCopy.sizeText(item.size))" + (duration.map { ", \(MediaTime(seconds: $0).clockText)" } ?? "")
        return "the room plays \"\(title)\" (\(what)) from each member's own file: to watch, "
            + "start with your copy (cowatch watch ROOM-URL FILE)"
    }
}
