import CowatchTime
import SlashCommands

/// The coordinator's four states, as in Jellyfin SyncPlay and AVPlaybackCoordinator.
public enum PlaybackStatus: String, Hashable, Sendable, Codable {
    /// No item: no session, or the session ended.
    case idle
    case paused
    /// Held at `position` until every counted player reports `/ready`.
    case waiting
    case playing
}

/// The group's playback anchor: where the media is, and since when.
///
/// When playing, the media position at server time T is
/// `position + rate * (T - at)`, and held at `position` before `at` (a coordinated
/// start announces an `at` slightly in the future). Otherwise it is `position`.
public struct Playback: Hashable, Sendable, Codable {
    public var status: PlaybackStatus
    /// The activity identifier, or nil when idle.
    public var item: String?
    public var rate: PlaybackRate
    public var position: MediaTime
    public var at: ServerInstant
    public var by: MemberID?
    public var cause: Cause

    public init(status: PlaybackStatus, item: String?, rate: PlaybackRate, position: MediaTime,
                at: ServerInstant, by: MemberID?, cause: Cause) {
        self.status = status
        self.item = item
        self.rate = rate
        self.position = position
        self.at = at
        self.by = by
        self.cause = cause
    }

    public static func idle(at now: ServerInstant, cause: Cause, by: MemberID?) -> Playback {
        Playback(status: .idle, item: nil, rate: .normal, position: .zero, at: now, by: by, cause: cause)
    }

    /// The group's media position at `now`.
    public func position(at now: ServerInstant) -> MediaTime {
        guard status == .playing, now > at else { return position }
        return position.offset(by: rate.value * now.interval(since: at).seconds)
    }
}

/// What the group session is watching: SharePlay's `GroupActivity`.
public struct Activity: Hashable, Sendable, Codable {
    /// Unique per sharing, so replacing an item with itself later is still a new activity.
    public var id: String
    /// Where every player loads it; nil for an own copy, which each member picks on their disk.
    public var url: MediaURL?
    public var title: String
    /// The item's identity, which readiness and end reports are matched against:
    /// `youtube:<id>` or `vimeo:<id>` for a provider's video (two links to one video
    /// are one item), the URL for a file (`MediaSource.identifier(for:)`),
    /// `own:<hash>:<size>` for an own copy (`OwnCopy.identifier`).
    public var identifier: String
    /// WebVTT tracks for this activity (`/subtitles`); each viewer picks one or none.
    public var subtitles: [SubtitleTrack] = []
    /// Which player plays it, as its link says.
    public var source: MediaSource = .file
    /// A live stream: no timeline to seek in, played at its live edge. Set by the
    /// first player's `/duration` report (a `/live/` link says so until then).
    public var live = false
    /// Its length, once a player reported it; nil while unknown and for live streams.
    public var duration: MediaTime?
    /// For a live item, where its live edge was at a server instant, from the first
    /// player's report: the edge now is this position plus the time since, at rate 1.
    /// Kept with the room, not sent.
    public var liveEdge: LiveEdge?

    public init(id: String, url: MediaURL?, title: String, identifier: String, subtitles: [SubtitleTrack] = [],
                source: MediaSource = .file, live: Bool = false, duration: MediaTime? = nil, liveEdge: LiveEdge? = nil) {
        self.id = id
        self.url = url
        self.title = title
        self.identifier = identifier
        self.subtitles = subtitles
        self.source = source
        self.live = live
        self.duration = duration
        self.liveEdge = liveEdge
    }

    /// Whether a player has told what the item is (`/duration`): only the first report counts.
    public var lengthKnown: Bool { duration != nil || liveEdge != nil }

    enum CodingKeys: String, CodingKey {
        case id, url, title, identifier, subtitles, source, live, duration, liveEdge
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        id = try container.decode(String.self, forKey: .id)
        url = try container.decodeIfPresent(MediaURL.self, forKey: .url)
        title = try container.decode(String.self, forKey: .title)
        identifier = try container.decode(String.self, forKey: .identifier)
        // Rooms saved before subtitles have none; before sources, every item was a file of unknown length.
        subtitles = try container.decodeIfPresent([SubtitleTrack].self, forKey: .subtitles) ?? []
        source = try container.decodeIfPresent(MediaSource.self, forKey: .source) ?? .file
        live = try container.decodeIfPresent(Bool.self, forKey: .live) ?? false
        duration = try container.decodeIfPresent(MediaTime.self, forKey: .duration)
        liveEdge = try container.decodeIfPresent(LiveEdge.self, forKey: .liveEdge)
    }
}

/// A live stream's edge: the media position a player following it would play at
/// a server instant. It moves at rate 1 as the stream is made.
public struct LiveEdge: Hashable, Sendable, Codable {
    public var position: MediaTime
    public var at: ServerInstant

    public init(position: MediaTime, at: ServerInstant) {
        self.position = position
        self.at = at
    }

    /// The edge at `now` (held at `position` before `at`).
    public func position(at now: ServerInstant) -> MediaTime {
        guard now > at else { return position }
        return position.offset(by: now.interval(since: at).seconds)
    }
}

/// A subtitle track of an activity: a WebVTT file, with the label viewers choose it by.
public struct SubtitleTrack: Hashable, Sendable, Codable {
    /// `s1`, `s2`... within the activity.
    public var id: String
    public var url: MediaURL
    public var label: String

    public init(id: String, url: MediaURL, label: String) {
        self.id = id
        self.url = url
        self.label = label
    }
}

/// The room's group session, as SharePlay's `GroupSession`.
public struct GroupSession: Hashable, Sendable, Codable {
    public enum State: String, Hashable, Sendable, Codable {
        case joined, invalidated
    }

    public var state: State
    /// Why it was invalidated (`ended`), nil while joined.
    public var reason: String?
    public var activity: Activity

    public var isActive: Bool { state == .joined }
}

public struct QueueItem: Hashable, Sendable, Codable {
    public var id: String
    public var url: MediaURL
    public var title: String
}

/// A room's rules, changed by hosts with `/policy`.
public struct RoomPolicy: Hashable, Sendable, Codable {
    public var control: ControlPolicy
    public var stall: StallPolicy
    /// How long a coordinated start waits for stragglers.
    public var wait: ServerInterval
    /// Locked: only invite links, the owner key and members present let anyone in.
    public var locked: Bool
    /// A password is asked of newcomers (the digest is in `RoomProtection`).
    public var password: Bool
    /// Listed on the server's landing page (`/public on`).
    public var listed: Bool

    public init(control: ControlPolicy = .everyone, stall: StallPolicy = .continue,
                wait: ServerInterval = ServerInterval(milliseconds: 5000), locked: Bool = false, password: Bool = false,
                listed: Bool = false) {
        self.control = control
        self.stall = stall
        self.wait = wait
        self.locked = locked
        self.password = password
        self.listed = listed
    }

    /// Policies saved before locks, passwords and listings existed read as open and unlisted.
    public init(from decoder: any Decoder) throws {
        let values = try decoder.container(keyedBy: CodingKeys.self)
        self.init(control: try values.decode(ControlPolicy.self, forKey: .control),
                  stall: try values.decode(StallPolicy.self, forKey: .stall),
                  wait: try values.decode(ServerInterval.self, forKey: .wait),
                  locked: try values.decodeIfPresent(Bool.self, forKey: .locked) ?? false,
                  password: try values.decodeIfPresent(Bool.self, forKey: .password) ?? false,
                  listed: try values.decodeIfPresent(Bool.self, forKey: .listed) ?? false)
    }
}

/// The authoritative state every member receives, numbered by `seq`.
public struct RoomState: Hashable, Sendable, Codable {
    public var seq: Int64
    public var session: GroupSession?
    public var playback: Playback
    public var queue: [QueueItem]
    public var policy: RoomPolicy
}
