@testable import CowatchCore
import CowatchTime
import SlashCommands

/// The room's events a player test hands the player, made of the core's own
/// types as the server makes them (and as `JSONEventDecoding` reads them).
enum RoomEvents {
    static func member(_ id: String, suspensions: [String] = []) -> Participant {
        Participant(id: MemberID(id), name: DisplayName("m")!, role: .member, joined: true, player: true, ready: false,
                    suspensions: suspensions.map { SuspensionReason(rawValue: $0)! }, autoplay: true, connected: true,
                    owner: false, muted: false, copy: nil, scope: nil)
    }

    static func welcome(_ id: String, ownerKey: String? = nil) -> RoomEvent {
        let you = member(id)
        return .welcome(Welcome(you: you, room: RoomName("room")!, serverTime: ServerInstant(milliseconds: 1_000_000),
                                resume: "r", ownerKey: ownerKey, participants: [you], chat: []))
    }

    /// The member with these suspensions, as the event of the latest change says it.
    static func participant(_ id: String, suspensions: [String]) -> RoomEvent {
        let who = member(id, suspensions: suspensions)
        return .participant(who, change: who.suspensions.last.map { .suspended($0) } ?? .resumed(nil))
    }

    static func link(_ url: String, duration: Double?) -> Activity {
        let link = MediaURL(url)!
        return Activity(id: "a", url: link, title: "", identifier: link.text, duration: duration.map { MediaTime(seconds: $0) })
    }

    static func own(hash: UInt64, size: Int64, duration: Double, title: String) -> Activity {
        let copy = OwnCopy(hash: hash, size: size, duration: duration)!
        return Activity(id: "a", url: nil, title: title, identifier: copy.identifier, source: .own(copy), duration: copy.duration)
    }

    static func state(_ seq: Int, _ status: PlaybackStatus, activity: Activity, rate: Double = 1, position: Double,
                      at: PreciseInstant) -> RoomEvent {
        let playback = Playback(status: status, item: activity.identifier, rate: PlaybackRate(rate)!,
                                position: MediaTime(seconds: position), at: instant(at), by: nil, cause: .play)
        return .state(RoomState(seq: Int64(seq), session: GroupSession(state: .joined, reason: nil, activity: activity),
                                playback: playback, queue: [], policy: RoomPolicy()))
    }

    static func error(_ code: ErrorCode, _ message: String, command: CommandName?) -> RoomEvent {
        .error(CommandError(code, command: command, message: message))
    }

    static func catchup(from: Double, rate: Double, until: PreciseInstant) -> RoomEvent {
        .catchup(Catchup(from: MediaTime(seconds: from), rate: PlaybackRate(rate)!, until: instant(until)))
    }

    /// On the wire an instant is whole milliseconds: beyond what they hold, the furthest they do.
    static func instant(_ precise: PreciseInstant) -> ServerInstant {
        let rounded = precise.milliseconds.rounded()
        return ServerInstant(milliseconds: Int64(exactly: rounded) ?? (rounded > 0 ? .max : .min))
    }
}
