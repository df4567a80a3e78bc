import CowatchCore
import CowatchTime

/// The room's state as the desktop player reads it, from the core's own
/// `RoomState` (decoded by `JSONEventDecoding`): the item a joined session
/// plays, and the group's timeline in the player's precise time.
extension RoomState {
    /// The session's item while the session is joined; nil with no session, or once it ended.
    var joinedActivity: Activity? {
        guard let session, session.isActive else { return nil }
        return session.activity
    }

    var status: PlaybackStatus { playback.status }
    var item: String? { playback.item }
    /// Seconds into the media at `at`.
    var position: Double { playback.position.seconds }
    var at: PreciseInstant { PreciseInstant(milliseconds: Double(playback.at.milliseconds)) }
    var rate: Double { playback.rate.value }

    /// The group's timeline; nil when nothing plays.
    var timeline: Timeline? {
        status == .idle ? nil : Timeline(playing: status == .playing, position: position, at: at, rate: rate)
    }
}

extension Participant {
    func isSuspended(for reason: String) -> Bool {
        suspensions.contains { $0.rawValue == reason }
    }
}
