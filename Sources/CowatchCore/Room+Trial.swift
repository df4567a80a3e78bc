import CowatchTime
import SlashCommands

extension Room {
    /// Whether `line` from `id` would change the room, tried on a copy that is
    /// then thrown away. The gateway asks before it spends anything on a line (a
    /// look at a shared link costs a request to someone else's server): a line the
    /// room would refuse (a `read` bot, a muted member, playback reserved to hosts,
    /// a media host not allowed) or ignore (the same video again) costs nothing.
    public func wouldChange(_ line: InputLine, from id: MemberID, now: ServerInstant) -> Bool {
        var trial = self
        return trial.receive(line, from: id, now: now).contains { action in
            if case .broadcast = action { true } else { false }
        }
    }
}
