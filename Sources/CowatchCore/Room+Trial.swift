import CowatchTime
import SlashCommands

extension Room {
    /// Whether `line` from `id` would change the room, tried on a copy that is
    /// then thrown away. The gateway asks before it spends anything on a line (a
    /// look at a shared link costs a request to someone else's server): a line the
    /// room would refuse (a `read` bot, a muted member, playback reserved to hosts,
    /// a media host not allowed) or ignore (the same video again) costs nothing.
    public func wouldChange(_ line: InputLine, from id: MemberID, now: ServerInstant) -> Bool {
        trial(line, from: id, now: now) { action in
            if case .broadcast = action { true } else { false }
        }
    }

    /// Whether `line` from `id` would change anything of the room: what its
    /// members are shown or what is written of it. A room that may not change
    /// for a while (a cluster's room whose lease waits for its database) still
    /// answers what changes nothing: `/who`, `/status`, `/time`.
    public func wouldChangeOrRecord(_ line: InputLine, from id: MemberID, now: ServerInstant) -> Bool {
        trial(line, from: id, now: now) { action in
            switch action {
            case .broadcast, .persist, .persistMember, .forgetMember, .persistChat, .forgetRoom, .closeConnection: true
            default: false
            }
        }
    }

    /// Whether any action of `line`, received by a throwaway copy, is `counted`.
    private func trial(_ line: InputLine, from id: MemberID, now: ServerInstant,
                       counted: (RoomAction) -> Bool) -> Bool {
        var copy = self
        return copy.receive(line, from: id, now: now).contains(where: counted)
    }
}
