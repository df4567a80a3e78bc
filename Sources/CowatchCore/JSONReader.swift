/// Reads JSON text (RFC 8259) one value at a time, the counterpart of `JSONWriter`:
/// the caller asks for the value it expects next, and skips what it does not want
/// without building it.
///
/// Written here rather than taken from Foundation for two reasons. The core
/// imports no Foundation (it is what every client, the fuzzers and the gateway
/// link). And a reader that can stop after the fields it wants lets the load
/// generator read a frame's `type` and `seq` at the cost of a byte scan, where a
/// decode into values doubled its cost per delivery (docs/benchmarks.md, "Reading
/// frames in the load generator").
///
/// Strict where JSON is: one value, strings of valid UTF-8 without raw control
/// characters, escapes and numbers as the grammar has them, no trailing commas.
/// Nesting is bounded (`maximumDepth`), so hostile text cannot exhaust the stack
/// or the time of a caller that skips it.
public struct JSONReader {
    public static let maximumDepth = 64

    private let bytes: UnsafeBufferPointer<UInt8>
    private var index = 0
    private var depth = 0
    /// Just after `{` or `[`: no comma before the first member.
    private var atFirst = false

    /// Reads `bytes`, which must outlive the reader (use it inside `withUTF8`).
    public init(_ bytes: UnsafeBufferPointer<UInt8>) {
        self.bytes = bytes
    }

    /// Where reading stopped and why.
    public struct Failure: Error, Hashable, Sendable, CustomStringConvertible {
        public var offset: Int
        public var problem: String
        public var description: String { "\(problem) at byte \(offset)" }
    }

    func failure(_ problem: String) -> Failure { Failure(offset: index, problem: problem) }

    // MARK: Containers

    public mutating func beginObject() throws {
        try open(UInt8(ascii: "{"), "an object")
    }

    /// The next member's key, or nil at the object's end (which it reads).
    public mutating func nextKey() throws -> String? {
        guard try nextMember(closing: UInt8(ascii: "}")) else { return nil }
        guard peek() == UInt8(ascii: "\"") else { throw failure("a key must be a string") }
        let key = try readString()
        skipSpace()
        guard peek() == UInt8(ascii: ":") else { throw failure("a key must be followed by ':'") }
        index += 1
        return key
    }

    public mutating func beginArray() throws {
        try open(UInt8(ascii: "["), "an array")
    }

    /// Whether another element follows; false at the array's end (which it reads).
    public mutating func nextElement() throws -> Bool {
        try nextMember(closing: UInt8(ascii: "]"))
    }

    /// Reads an array whose elements `element` reads, at most `limit` of them.
    public mutating func readArray<T>(limit: Int = .max,
                                      _ element: (inout JSONReader) throws -> T) throws -> [T] {
        try beginArray()
        var values: [T] = []
        while try nextElement() {
            guard values.count < limit else { throw failure("more than \(limit) elements") }
            values.append(try element(&self))
        }
        return values
    }

    /// The reader is at the end of the text (whitespace aside).
    public mutating func end() throws {
        skipSpace()
        guard index == bytes.count else { throw failure("text after the value") }
    }

    // MARK: Scalars

    public mutating func readString() throws -> String {
        skipSpace()
        guard peek() == UInt8(ascii: "\"") else { throw failure("expected a string") }
        index += 1
        let start = index
        // Most strings have no escape: one slice, validated once.
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                let text = try utf8(from: start, to: index)
                index += 1
                return text
            }
            if byte == UInt8(ascii: "\\") { break }
            guard byte >= 0x20 else { throw failure("a control character in a string") }
            index += 1
        }
        var scalars: [UInt8] = Array(bytes[start..<index])
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                guard let text = String(validating: scalars, as: UTF8.self) else { throw failure("a string that is not UTF-8") }
                return text
            case UInt8(ascii: "\\"):
                index += 1
                try readEscape(into: &scalars)
            case ..<0x20:
                throw failure("a control character in a string")
            default:
                scalars.append(byte)
                index += 1
            }
        }
        throw failure("an unterminated string")
    }

    public mutating func readBool() throws -> Bool {
        skipSpace()
        if literal("true") { return true }
        if literal("false") { return false }
        throw failure("expected true or false")
    }

    /// Reads `null` when it is next, and says whether it was.
    public mutating func readNull() -> Bool {
        skipSpace()
        return literal("null")
    }

    /// A number, as a `Double`.
    public mutating func readNumber() throws -> Double {
        let (start, integral) = try scanNumber()
        if integral, index - start <= 15, let value = Int64(digits: bytes[start..<index]) { return Double(value) }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.isFinite else {
            throw failure("a number out of range")
        }
        return value
    }

    /// A whole number: written without a fraction, or with one that is zero.
    public mutating func readInteger() throws -> Int64 {
        let (start, integral) = try scanNumber()
        if integral {
            guard let value = Int64(digits: bytes[start..<index]) else { throw failure("an integer out of range") }
            return value
        }
        guard let value = Double(String(decoding: bytes[start..<index], as: UTF8.self)), value.rounded() == value,
              let whole = Int64(exactly: value) else { throw failure("expected a whole number") }
        return whole
    }

    /// The first byte of the next value, spaces skipped, or nil at the end: for
    /// a caller that builds whatever value comes (`SyncplayJSON`).
    public mutating func nextValueStart() -> UInt8? {
        skipSpace()
        return peek()
    }

    /// Skips one value of any kind, checking it as it goes.
    public mutating func skipValue() throws {
        skipSpace()
        switch peek() {
        case UInt8(ascii: "{"):
            try beginObject()
            while try nextKey() != nil { try skipValue() }
        case UInt8(ascii: "["):
            try beginArray()
            while try nextElement() { try skipValue() }
        case UInt8(ascii: "\""):
            try skipString()
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            _ = try readBool()
        case UInt8(ascii: "n"):
            guard readNull() else { throw failure("expected null") }
        default:
            _ = try scanNumber()
        }
    }

    // MARK: Inside

    private func peek() -> UInt8? {
        index < bytes.count ? bytes[index] : nil
    }

    private mutating func skipSpace() {
        while index < bytes.count {
            switch bytes[index] {
            case 0x20, 0x0A, 0x0D, 0x09: index += 1
            default: return
            }
        }
    }

    private mutating func open(_ bracket: UInt8, _ what: String) throws {
        skipSpace()
        guard peek() == bracket else { throw failure("expected \(what)") }
        guard depth < Self.maximumDepth else { throw failure("nested deeper than \(Self.maximumDepth)") }
        index += 1
        depth += 1
        atFirst = true
    }

    /// Past the comma before the next member, or past the closing bracket (false).
    private mutating func nextMember(closing: UInt8) throws -> Bool {
        skipSpace()
        if peek() == closing {
            // A comma just before it was refused below, so this is an end.
            index += 1
            depth -= 1
            atFirst = false
            return false
        }
        if atFirst {
            atFirst = false
        } else {
            guard peek() == UInt8(ascii: ",") else { throw failure("expected ',' or '\(Character(Unicode.Scalar(closing)))'") }
            index += 1
            skipSpace()
            guard peek() != closing else { throw failure("a comma before '\(Character(Unicode.Scalar(closing)))'") }
        }
        return true
    }

    private mutating func literal(_ word: StaticString) -> Bool {
        let count = word.utf8CodeUnitCount
        guard bytes.count - index >= count else { return false }
        let matches = word.withUTF8Buffer { expected in
            (0..<count).allSatisfy { bytes[index + $0] == expected[$0] }
        }
        if matches { index += count }
        return matches
    }

    private func utf8(from start: Int, to end: Int) throws -> String {
        let slice = UnsafeBufferPointer(rebasing: bytes[start..<end])
        try checkUTF8(slice, at: start)
        return String(decoding: slice, as: UTF8.self)
    }

    /// Checks UTF-8 without making a string: most of what is skipped is never read.
    private func checkUTF8(_ slice: UnsafeBufferPointer<UInt8>, at start: Int) throws {
        // ASCII, nearly all of the protocol's text, needs no more than a look at each byte.
        guard slice.contains(where: { $0 >= 0x80 }) else { return }
        var parser = Unicode.UTF8.ForwardParser()
        var iterator = slice.makeIterator()
        while true {
            switch parser.parseScalar(from: &iterator) {
            case .valid: continue
            case .emptyInput: return
            case .error: throw Failure(offset: start, problem: "a string that is not UTF-8")
            }
        }
    }

    private mutating func skipString() throws {
        index += 1
        let start = index
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""):
                try checkUTF8(UnsafeBufferPointer(rebasing: bytes[start..<index]), at: start)
                index += 1
                return
            case UInt8(ascii: "\\"):
                index += 1
                var ignored: [UInt8] = []
                try readEscape(into: &ignored)
            case ..<0x20:
                throw failure("a control character in a string")
            default:
                index += 1
            }
        }
        throw failure("an unterminated string")
    }

    /// After a backslash: appends what the escape stands for, in UTF-8.
    private mutating func readEscape(into scalars: inout [UInt8]) throws {
        guard let byte = peek() else { throw failure("an unterminated escape") }
        index += 1
        let simple: UInt8? = switch byte {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): byte
        case UInt8(ascii: "b"): 0x08
        case UInt8(ascii: "f"): 0x0C
        case UInt8(ascii: "n"): 0x0A
        case UInt8(ascii: "r"): 0x0D
        case UInt8(ascii: "t"): 0x09
        default: nil
        }
        if let simple {
            scalars.append(simple)
            return
        }
        guard byte == UInt8(ascii: "u") else { throw failure("an unknown escape") }
        var value = try hex4()
        if (0xD800...0xDBFF).contains(value) {
            // A high surrogate must be followed by its low half.
            guard literal("\\u") else { throw failure("a lone surrogate") }
            let low = try hex4()
            guard (0xDC00...0xDFFF).contains(low) else { throw failure("a lone surrogate") }
            value = 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
        } else if (0xDC00...0xDFFF).contains(value) {
            throw failure("a lone surrogate")
        }
        guard let scalar = Unicode.Scalar(value) else { throw failure("an invalid escape") }
        UTF8.encode(scalar) { scalars.append($0) }
    }

    private mutating func hex4() throws -> UInt32 {
        guard bytes.count - index >= 4 else { throw failure("a short \\u escape") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[index]
            let digit: UInt8 = switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: throw failure("a \\u escape that is not hexadecimal")
            }
            value = value << 4 | UInt32(digit)
            index += 1
        }
        return value
    }

    /// Past one number as JSON writes it: where it starts, and whether it had no
    /// fraction and no exponent.
    private mutating func scanNumber() throws -> (start: Int, integral: Bool) {
        skipSpace()
        let start = index
        if peek() == UInt8(ascii: "-") { index += 1 }
        guard let first = peek(), isDigit(first) else { throw failure("expected a value") }
        index += 1
        if first != UInt8(ascii: "0") { skipDigits() }
        var integral = true
        if peek() == UInt8(ascii: ".") {
            index += 1
            guard let digit = peek(), isDigit(digit) else { throw failure("a fraction without digits") }
            skipDigits()
            integral = false
        }
        if peek() == UInt8(ascii: "e") || peek() == UInt8(ascii: "E") {
            index += 1
            if peek() == UInt8(ascii: "+") || peek() == UInt8(ascii: "-") { index += 1 }
            guard let digit = peek(), isDigit(digit) else { throw failure("an exponent without digits") }
            skipDigits()
            integral = false
        }
        return (start, integral)
    }

    private func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    private mutating func skipDigits() {
        while let byte = peek(), isDigit(byte) { index += 1 }
    }
}

extension Int64 {
    /// `-?[0-9]+` as written, or nil when it overflows.
    init?(digits: Slice<UnsafeBufferPointer<UInt8>>) {
        var value: Int64 = 0
        var negative = false
        for byte in digits {
            if byte == UInt8(ascii: "-") {
                negative = true
                continue
            }
            let (times, overflowTimes) = value.multipliedReportingOverflow(by: 10)
            let digit = Int64(byte - UInt8(ascii: "0"))
            let (sum, overflowSum) = negative ? times.subtractingReportingOverflow(digit) : times.addingReportingOverflow(digit)
            guard !overflowTimes, !overflowSum else { return nil }
            value = sum
        }
        self = value
    }
}
