import CowatchTime
import Foundation
import SlashCommands

/// What the desktop player needs from the room's `cowatch.v1.json` events
/// (docs/protocol.md, "Events"), read from one event's text. Fields the player
/// does not use are not read; an event it does not follow is `.other`.
public enum RoomMessage: Sendable, Hashable {
    /// `ownerKey`: the room was created by this connection, and this is its owner key (shown once).
    case welcome(you: Member, ownerKey: String? = nil)
    case state(RoomState)
    case participant(Member)
    /// A catch-up's replay: from media position `from` at `rate`, meeting the group at `until`.
    case catchup(from: Double, rate: Double, until: PreciseInstant)
    /// The answer to `/time <client>`: the client's own clock reading echoed
    /// (epoch milliseconds, as `MpvRunner` sends it), and the server's clock.
    case time(client: PreciseInstant, server: PreciseInstant)
    /// An `error`: its code, its words, and the command refused (nil when the line named none).
    case error(code: String, message: String, command: String?)
    case other

    /// One event's JSON text; nil when it is not a JSON object with a `type`.
    public init?(json text: String) {
        guard let data = text.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
              let type = object["type"] as? String else { return nil }
        switch type {
        case "welcome":
            guard let you = (object["you"] as? [String: Any]).flatMap(Member.init(object:)) else { return nil }
            self = .welcome(you: you, ownerKey: object["ownerKey"] as? String)
        case "state":
            guard let state = RoomState(object: object) else { return nil }
            self = .state(state)
        case "participant":
            guard let member = (object["participant"] as? [String: Any]).flatMap(Member.init(object:)) else { return nil }
            self = .participant(member)
        case "catchup":
            guard let from = number(object["from"]), let rate = number(object["rate"]), let until = number(object["until"]) else { return nil }
            self = .catchup(from: from, rate: rate, until: PreciseInstant(milliseconds: until))
        case "time":
            guard let client = number(object["client"]), let server = number(object["server"]) else { return nil }
            self = .time(client: PreciseInstant(milliseconds: client), server: PreciseInstant(milliseconds: server))
        case "error":
            self = .error(code: object["code"] as? String ?? "", message: object["message"] as? String ?? "",
                          command: object["command"] as? String)
        default:
            self = .other
        }
    }
}

/// A participant, as far as a player follows it: its own member's suspensions.
public struct Member: Sendable, Hashable {
    public var id: String
    public var joined: Bool
    public var suspensions: [String]

    public init(id: String, joined: Bool = true, suspensions: [String] = []) {
        self.id = id
        self.joined = joined
        self.suspensions = suspensions
    }

    init?(object: [String: Any]) {
        guard let id = object["id"] as? String else { return nil }
        self.init(id: id, joined: object["joined"] as? Bool ?? false, suspensions: object["suspensions"] as? [String] ?? [])
    }
}

/// The item a joined session watches.
public struct Activity: Sendable, Hashable {
    /// Where to play it; nil for an own copy (each member plays their own file).
    public var url: String?
    public var title: String
    /// Seconds, nil while no player has reported it.
    public var duration: Double?
    public var live: Bool
    /// The item's identity (`identifier`): one item however it is linked.
    public var identifier: String
    /// For an own copy, the file it is (`source`).
    public var own: OwnItem?

    public init(url: String?, title: String = "", duration: Double? = nil, live: Bool = false,
                identifier: String? = nil, own: OwnItem? = nil) {
        self.url = url
        self.title = title
        self.duration = duration
        self.live = live
        self.identifier = identifier ?? own?.identifier ?? url ?? ""
        self.own = own
    }
}

/// An own-copy item's file, as the room knows it (`source` `{"kind":"own",...}`).
public struct OwnItem: Sendable, Hashable {
    public var hash: UInt64
    public var size: Int64

    public init(hash: UInt64, size: Int64) {
        self.hash = hash
        self.size = size
    }

    public var identifier: String { OwnCopy.identifier(hash: hash, size: size) }

    init?(source: [String: Any]?) {
        guard let source, source["kind"] as? String == "own", let text = source["hash"] as? String,
              let hash = OwnCopy.parseHash(Substring(text)), let size = number(source["size"]), size >= 1,
              size <= Double(OwnCopy.maximumBytes) else { return nil }
        self.init(hash: hash, size: Int64(size))
    }
}

/// A room's `state` event, as the player reads it.
public struct RoomState: Sendable, Hashable {
    public enum Status: String, Sendable { case idle, paused, waiting, playing }

    public var seq: Int
    /// The session's activity when the session is joined; nil otherwise.
    public var activity: Activity?
    public var status: Status
    public var item: String
    public var rate: Double
    /// Seconds into the media at `at`.
    public var position: Double
    /// Server time.
    public var at: PreciseInstant

    public init(seq: Int, activity: Activity?, status: Status, item: String = "1", rate: Double = 1, position: Double,
                at: PreciseInstant) {
        self.seq = seq
        self.activity = activity
        self.status = status
        self.item = item
        self.rate = rate
        self.position = position
        self.at = at
    }

    init?(object: [String: Any]) {
        guard let seq = object["seq"] as? Int, let playback = object["playback"] as? [String: Any],
              let status = (playback["status"] as? String).flatMap(Status.init(rawValue:)) else { return nil }
        var activity: Activity?
        if let session = object["session"] as? [String: Any], session["state"] as? String == "joined",
           let item = session["activity"] as? [String: Any] {
            let own = OwnItem(source: item["source"] as? [String: Any])
            // An item is played from its link, or from each member's own file.
            if let url = item["url"] as? String, own == nil {
                activity = Activity(url: url, title: item["title"] as? String ?? "", duration: number(item["duration"]),
                                    live: item["live"] as? Bool ?? false, identifier: item["identifier"] as? String)
            } else if let own {
                activity = Activity(url: nil, title: item["title"] as? String ?? "", duration: number(item["duration"]),
                                    identifier: item["identifier"] as? String, own: own)
            }
        }
        self.init(seq: seq, activity: activity, status: status, item: playback["item"] as? String ?? "",
                  rate: number(playback["rate"]) ?? 1, position: number(playback["position"]) ?? 0,
                  at: PreciseInstant(milliseconds: number(playback["at"]) ?? 0))
    }

    /// The group's timeline; nil when nothing plays.
    public var timeline: Timeline? {
        status == .idle ? nil : Timeline(playing: status == .playing, position: position, at: at, rate: rate)
    }
}

private func number(_ value: Any?) -> Double? {
    (value as? NSNumber)?.doubleValue
}
