/// Storage encodings of the validated values: each decodes through the same
/// validation as input does, so a damaged store cannot smuggle in what the
/// parser would refuse.
extension MediaTime: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(seconds: try decoder.singleValueContainer().decode(Double.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(seconds)
    }
}

extension PlaybackRate: Codable {
    public init(from decoder: any Decoder) throws {
        self.init(clamping: try decoder.singleValueContainer().decode(Double.self))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(value)
    }
}

/// A value stored as one string, decoded through the same validation as input.
public protocol TextCodable: Codable {
    /// Nil when `storedText` would not pass validation.
    init?(storedText: String)
    var storedText: String { get }
}

extension TextCodable {
    public init(from decoder: any Decoder) throws {
        self = try Self.decodeText(from: decoder)
    }

    public func encode(to encoder: any Encoder) throws {
        try encodeText(to: encoder)
    }

    /// For types whose `RawRepresentable` conformance would otherwise pick the
    /// standard library's unvalidated coding.
    public static func decodeText(from decoder: any Decoder) throws -> Self {
        let container = try decoder.singleValueContainer()
        guard let value = Self(storedText: try container.decode(String.self)) else {
            throw DecodingError.dataCorruptedError(in: container, debugDescription: "not a valid \(Self.self)")
        }
        return value
    }

    public func encodeText(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(storedText)
    }
}

extension MediaURL: TextCodable {
    public init?(storedText: String) { self.init(storedText) }
    public var storedText: String { text }
}

extension DisplayName: TextCodable {
    public init?(storedText: String) { self.init(stored: storedText) }
    public var storedText: String { text }
}

extension SuspensionReason: TextCodable {
    public init?(storedText: String) { self.init(rawValue: storedText) }
    public var storedText: String { rawValue }
    public init(from decoder: any Decoder) throws { self = try Self.decodeText(from: decoder) }
    public func encode(to encoder: any Encoder) throws { try encodeText(to: encoder) }
}

extension ControlPolicy: Codable {}
extension StallPolicy: Codable {}

/// Stored as `{"kind": "youtube", "id": "...", "start": 90, "live": false}`, the
/// id checked again as a link's is, so a damaged store cannot make up a source.
extension MediaSource: Codable {
    enum CodingKeys: String, CodingKey {
        case kind, id, start, live, hash, size, duration
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let kind = try container.decode(String.self, forKey: .kind)
        let start = try container.decodeIfPresent(MediaTime.self, forKey: .start)
        switch kind {
        case "file":
            self = .file
        case "youtube":
            let id = try container.decode(String.self, forKey: .id)
            guard Self.isYouTubeID(id[...]) else {
                throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "not a YouTube video id")
            }
            self = .youtube(id: id, start: start, live: try container.decodeIfPresent(Bool.self, forKey: .live) ?? false)
        case "vimeo":
            let id = try container.decode(String.self, forKey: .id)
            guard Self.isVimeoID(id[...]) else {
                throw DecodingError.dataCorruptedError(forKey: .id, in: container, debugDescription: "not a Vimeo video number")
            }
            self = .vimeo(id: id, start: start)
        case "own":
            let hashText = try container.decode(String.self, forKey: .hash)
            guard let hash = OwnCopy.parseHash(hashText[...]) else {
                throw DecodingError.dataCorruptedError(forKey: .hash, in: container, debugDescription: "not 16 hex digits")
            }
            guard let copy = OwnCopy(hash: hash, size: try container.decode(Int64.self, forKey: .size),
                                     duration: try container.decode(Double.self, forKey: .duration)) else {
                throw DecodingError.dataCorruptedError(forKey: .size, in: container, debugDescription: "not a file's size and length")
            }
            self = .own(copy)
        default:
            throw DecodingError.dataCorruptedError(forKey: .kind, in: container, debugDescription: "no media source \(kind)")
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(kind, forKey: .kind)
        try container.encodeIfPresent(providerID, forKey: .id)
        try container.encodeIfPresent(start, forKey: .start)
        if isLiveLink { try container.encode(true, forKey: .live) }
        if let copy = ownCopy {
            try container.encode(copy.hashText, forKey: .hash)
            try container.encode(copy.size, forKey: .size)
            try container.encode(copy.duration.seconds, forKey: .duration)
        }
    }
}
