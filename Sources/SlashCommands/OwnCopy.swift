/// A file each member plays from their own disk, known to the room by identity
/// only: nothing is uploaded and no address is shared (docs/protocol.md, "Own copies").
///
/// The identity is what media players and subtitle sites already match files by:
/// OpenSubtitles' 64-bit hash (the size plus the little-endian 64-bit words of the
/// first and last 64 KiB), the size in bytes, and the length the sharer's player
/// read. A renamed copy still matches; another cut or encoding does not. The
/// file's name is not part of it, so a room's history holds no names unless the
/// sharer types one as the title.
public struct OwnCopy: Hashable, Sendable {
    /// The OpenSubtitles hash.
    public let hash: UInt64
    /// The file's size in bytes, 1 to `maximumBytes`.
    public let size: Int64
    /// Its length, more than 0 and at most `CommandTable.maximumReportedSeconds`.
    public let duration: MediaTime

    /// 1 PiB: far beyond any file a browser reads, and exact in a JSON number.
    public static let maximumBytes: Int64 = 1 << 50

    public init?(hash: UInt64, size: Int64, duration: Double) {
        guard (1...Self.maximumBytes).contains(size), duration.isFinite, duration > 0,
              duration <= CommandTable.maximumReportedSeconds else { return nil }
        self.hash = hash
        self.size = size
        self.duration = MediaTime(seconds: duration)
    }

    /// The hash as 16 lower-case hex digits, as OpenSubtitles writes it.
    public var hashText: String { Self.hashText(hash) }

    /// The item's identity, `own:<hash>:<size>`: two members with one file share it.
    public var identifier: String { Self.identifier(hash: hash, size: size) }

    /// `own:<hash>:<size>`, for any holder of a file's hash and size (the
    /// desktop player's file, the item it reads from a state).
    public static func identifier(hash: UInt64, size: Int64) -> String { "own:\(hashText(hash)):\(size)" }

    /// What the room calls the item when the sharer gave no title: its size and
    /// length, never its name (`a file of 1.4 GB, 1:42:10`).
    public var neutralTitle: String { "a file of \(Self.sizeText(size)), \(duration.clockText)" }

    /// Sizes as people read them, in powers of 1,000 with one decimal (`1.4 GB`).
    public static func sizeText(_ bytes: Int64) -> String {
        let units = ["KB", "MB", "GB", "TB", "PB"]
        guard bytes >= 1000 else { return "\(bytes) bytes" }
        var value = Double(bytes) / 1000
        var unit = 0
        while value >= 999.95 && unit < units.count - 1 {
            value /= 1000
            unit += 1
        }
        let tenths = Int64((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(units[unit])"
    }

    /// OpenSubtitles reads this many bytes at each end of a file.
    public static let hashChunk: Int64 = 65536

    /// The byte ranges the hash reads from a file of `size` bytes: the first 64 KiB
    /// and the last (overlapping when the file is shorter than 128 KiB).
    public static func hashRanges(size: Int64) -> (head: Range<Int64>, tail: Range<Int64>) {
        (0..<min(size, hashChunk), max(0, size - hashChunk)..<max(0, size))
    }

    /// The OpenSubtitles hash of a file of `size` bytes whose `hashRanges` hold
    /// `head` and `tail`: the size plus every little-endian 64-bit word of both,
    /// modulo 2^64 (a short last word padded with zeros). The same sum as the
    /// page's (static/sync/own-copy.js), so a desktop player and a page agree.
    public static func hash(size: Int64, head: [UInt8], tail: [UInt8]) -> UInt64 {
        var sum = UInt64(truncatingIfNeeded: size)
        for bytes in [head, tail] {
            var index = 0
            while index < bytes.count {
                var word: UInt64 = 0
                for offset in 0..<min(8, bytes.count - index) {
                    word |= UInt64(bytes[index + offset]) << (8 * UInt64(offset))
                }
                sum &+= word
                index += 8
            }
        }
        return sum
    }

    /// The hash as `hashText` writes it.
    public static func hashText(_ hash: UInt64) -> String {
        let digits = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }

    /// 16 hex digits, either case.
    public static func parseHash(_ text: Substring) -> UInt64? {
        guard text.utf8.count == 16, text.utf8.allSatisfy({ ($0 >= 0x30 && $0 <= 0x39) || (($0 | 0x20) >= 0x61 && ($0 | 0x20) <= 0x66) })
        else { return nil }
        return UInt64(text, radix: 16)
    }
}
