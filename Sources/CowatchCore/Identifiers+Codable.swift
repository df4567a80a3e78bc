import CowatchTime
import SlashCommands

extension ServerInstant: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(milliseconds: try decoder.singleValueContainer().decode(Int64.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(milliseconds)
    }
}

extension ServerInterval: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(milliseconds: try decoder.singleValueContainer().decode(Int64.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(milliseconds)
    }
}

extension MemberID: TextCodable {
    public init?(storedText: String) { self.init(storedText) }
    public var storedText: String { rawValue }
}

extension RoomName: TextCodable {
    public init?(storedText: String) { self.init(storedText) }
    public var storedText: String { rawValue }
}

extension Cause: TextCodable {
    public init?(storedText: String) { self.init(rawValue: storedText) }
    public var storedText: String { rawValue }
    public init(from decoder: any Decoder) throws { self = try Self.decodeText(from: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeText(to: encoder) }
}
