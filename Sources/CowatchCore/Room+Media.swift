import CowatchTime
import SlashCommands

/// What the players find the item to be once loaded (`/duration`), and the rules
/// that follow from it: no seeking past a known end, and a live stream played at
/// its live edge, with nothing to seek in and no rate but 1.
extension Room {
    /// `/duration <seq> <seconds>` or `/duration <seq> live <edge>`: the first
    /// valid report for the current item tells the room its length, or that it is
    /// live and where its edge is; later ones change nothing, since every player
    /// loads the same item. A report answers the item of its state (the seq of the
    /// state that made it current, or a later one), as `/ended` does.
    mutating func mediaReport(_ id: MemberID, seq: Int64, length: MediaLength, now: ServerInstant) {
        guard requirePlayer(id, .duration), let member = members[id], member.joined,
              let activity = state.session?.activity, state.session?.isActive == true, state.playback.status != .idle,
              requireCurrentReport(seq, oldest: itemSeq, from: id, .duration)
        else { return }
        guard !activity.lengthKnown else { return }
        switch length {
        case .seconds(let seconds):
            let end = MediaTime(seconds: seconds)
            state.session?.activity.duration = end
            state.session?.activity.live = false
            // A link's starting time past the end (t= beyond it) holds at the end instead.
            switch state.playback.status {
            case .paused where state.playback.position > end:
                holdPaused(at: end, cause: .media, by: id, now: now)
            case .waiting where state.playback.position > end:
                beginCoordinatedStart(at: end, cause: .media, by: id, now: now)
            case .idle, .paused, .waiting, .playing:
                publish(.media, by: id)
            }
        case .live(let edge):
            state.session?.activity.live = true
            state.session?.activity.duration = nil
            state.session?.activity.liveEdge = LiveEdge(position: edge, at: now)
            state.playback.rate = .normal
            // The group goes to the edge: held there while paused, and started
            // there together when it was starting or playing from where the link said.
            switch state.playback.status {
            case .idle, .paused:
                holdPaused(at: edge, cause: .media, by: id, now: now)
            case .waiting, .playing:
                beginCoordinatedStart(at: edge, cause: .media, by: id, now: now)
            }
            notify("\(ShownText.quoted(activity.title)) is a live stream: everyone follows its live edge; "
                   + "/pause holds it and /play rejoins the edge", cause: .media, by: id)
        }
    }

    /// The current item's live edge, when it is a live stream whose edge a player reported.
    var currentLiveEdge: LiveEdge? {
        guard let activity = state.session?.activity, activity.live else { return nil }
        return activity.liveEdge
    }

    var currentItemIsLive: Bool { state.session?.isActive == true && state.session?.activity.live == true }

    /// A position to move the group to: not in a live stream, and not past a known end.
    mutating func requireSeekable(_ target: MediaTime, from id: MemberID, _ command: CommandName) -> Bool {
        guard let activity = state.session?.activity else { return true }
        if activity.live {
            refuse(id, .notPossible, command,
                   "/\(command.rawValue): a live stream has no timeline to seek in; /play rejoins the live edge")
            return false
        }
        if let end = activity.duration, target > end {
            refuse(id, .notPossible, command,
                   "/\(command.rawValue): \(target) is past the end of \(ShownText.quoted(activity.title)), which lasts \(end)")
            return false
        }
        return true
    }

    /// A live stream plays at rate 1: it cannot go faster than it is made.
    mutating func requireNotLive(_ id: MemberID, _ command: CommandName, _ why: String) -> Bool {
        guard currentItemIsLive else { return true }
        refuse(id, .notPossible, command, "/\(command.rawValue): \(why); /play rejoins the live edge")
        return false
    }
}
