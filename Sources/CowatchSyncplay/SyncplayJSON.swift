import CowatchCore

/// One JSON value of Syncplay's protocol, built whole: its messages nest objects
/// whose keys are people's names and rooms' names (`List`, `Set user`), which the
/// core's fixed-shape writer cannot say. Read through the core's strict
/// `JSONReader` (bounded nesting, valid UTF-8); written with sorted keys, so that
/// a message is always the same text.
public enum SyncplayJSON: Hashable, Sendable {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([SyncplayJSON])
    case object([String: SyncplayJSON])

    /// Reads one line's value; throws on anything that is not exactly one JSON value.
    public static func parse(_ text: String) throws -> SyncplayJSON {
        var text = text
        return try text.withUTF8 { bytes in
            var reader = JSONReader(bytes)
            let value = try read(&reader)
            try reader.end()
            return value
        }
    }

    private static func read(_ reader: inout JSONReader) throws -> SyncplayJSON {
        switch reader.nextValueStart() {
        case UInt8(ascii: "{"):
            try reader.beginObject()
            var members: [String: SyncplayJSON] = [:]
            while let key = try reader.nextKey() { members[key] = try read(&reader) }
            return .object(members)
        case UInt8(ascii: "["):
            try reader.beginArray()
            var elements: [SyncplayJSON] = []
            while try reader.nextElement() { elements.append(try read(&reader)) }
            return .array(elements)
        case UInt8(ascii: "\""):
            return .string(try reader.readString())
        case UInt8(ascii: "t"), UInt8(ascii: "f"):
            return .bool(try reader.readBool())
        case UInt8(ascii: "n"):
            guard reader.readNull() else { throw NotJSON() }
            return .null
        default:
            return .number(try reader.readNumber())
        }
    }

    struct NotJSON: Error, CustomStringConvertible {
        var description: String { "expected null" }
    }

    // MARK: Reading members

    public subscript(key: String) -> SyncplayJSON? {
        guard case .object(let members) = self else { return nil }
        return members[key]
    }

    public var string: String? {
        guard case .string(let text) = self else { return nil }
        return text
    }

    public var number: Double? {
        guard case .number(let value) = self, value.isFinite else { return nil }
        return value
    }

    public var bool: Bool? {
        guard case .bool(let value) = self else { return nil }
        return value
    }

    public var members: [String: SyncplayJSON]? {
        guard case .object(let members) = self else { return nil }
        return members
    }

    public var elements: [SyncplayJSON]? {
        guard case .array(let elements) = self else { return nil }
        return elements
    }

    // MARK: Writing

    /// The value as one line of JSON (no line break inside: strings escape theirs).
    public var text: String {
        var out = ""
        write(into: &out)
        return out
    }

    private func write(into out: inout String) {
        switch self {
        case .null: out += "null"
        case .bool(let value): out += value ? "true" : "false"
        case .number(let value): out += Self.numberText(value)
        case .string(let text): Self.quote(text, into: &out)
        case .array(let elements):
            out += "["
            for (index, element) in elements.enumerated() {
                if index > 0 { out += ", " }
                element.write(into: &out)
            }
            out += "]"
        case .object(let members):
            out += "{"
            for (index, key) in members.keys.sorted().enumerated() {
                if index > 0 { out += ", " }
                Self.quote(key, into: &out)
                out += ": "
                members[key]?.write(into: &out)
            }
            out += "}"
        }
    }

    /// Whole numbers without a fraction (Syncplay's counters), others as Swift
    /// writes a Double, which JSON reads; never NaN or infinity, which it does not.
    static func numberText(_ value: Double) -> String {
        guard value.isFinite else { return "0" }
        if value == value.rounded(), abs(value) < 1e15 { return String(Int64(value)) }
        return "\(value)"
    }

    static func quote(_ text: String, into out: inout String) {
        out += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}

extension SyncplayJSON: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral, ExpressibleByFloatLiteral,
    ExpressibleByIntegerLiteral, ExpressibleByDictionaryLiteral, ExpressibleByArrayLiteral, ExpressibleByNilLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    public init(floatLiteral value: Double) { self = .number(value) }
    public init(integerLiteral value: Int) { self = .number(Double(value)) }
    public init(dictionaryLiteral elements: (String, SyncplayJSON)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    public init(arrayLiteral elements: SyncplayJSON...) { self = .array(elements) }
    public init(nilLiteral: ()) { self = .null }
}
