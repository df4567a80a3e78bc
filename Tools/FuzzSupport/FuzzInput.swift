/// Reads structured choices out of the fuzzer's bytes. Every byte string decodes
/// to something: past the end every read gives zero, so a target never has to
/// reject an input, and the fuzzer's mutations (flip, insert, cut) map to small
/// changes in what is decoded.
public struct FuzzInput {
    private let bytes: UnsafeRawBufferPointer
    private var position = 0

    public init(_ bytes: UnsafeRawBufferPointer) {
        self.bytes = bytes
    }

    public var isAtEnd: Bool { position >= bytes.count }

    /// The next byte, or 0 at the end.
    public mutating func byte() -> UInt8 {
        guard position < bytes.count else { return 0 }
        defer { position += 1 }
        return bytes[position]
    }

    /// 0..<bound from one byte (`bound` at most 256).
    public mutating func below(_ bound: Int) -> Int {
        Int(byte()) % Swift.max(1, bound)
    }

    /// A little-endian number from two bytes.
    public mutating func uint16() -> Int {
        let low = Int(byte())
        return low | Int(byte()) << 8
    }

    public mutating func pick<T>(_ items: [T]) -> T {
        items[below(items.count)]
    }

    /// Up to `count` raw bytes (fewer at the end).
    public mutating func bytes(_ count: Int) -> ArraySlice<UInt8> {
        let end = Swift.min(bytes.count, position + Swift.max(0, count))
        guard position < end else { return [] }
        defer { position = end }
        return Array(bytes[position..<end])[...]
    }
}
