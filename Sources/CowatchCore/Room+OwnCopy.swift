import CowatchTime
import SlashCommands

/// Own copies (docs/protocol.md, "Own copies"): an item each member plays from a
/// file on their own disk, known to the room by identity only. Each player says
/// whether it has the file (`/have`); the coordinator counts only those that do,
/// so a member without it stays in the room and its chat, not watching, and is
/// never waited for.
extension Room {
    /// `/watch own <hash> <size> <seconds> [title...]`: share an own copy, as
    /// `/watch` shares a link. Its length is known from the start (the sharer's
    /// player read it), so later `/duration` reports change nothing.
    mutating func watchOwn(_ copy: OwnCopy, title: String?, from id: MemberID, now: ServerInstant) {
        let active = state.session?.isActive == true
        if active {
            guard requireSessionMember(id, .watch) else { return }
        }
        guard requireControl(id, .watch) else { return }
        if active, let current = state.session?.activity, current.identifier == copy.identifier {
            guard let title, title != current.title else {
                tell(id, "already watching \(ShownText.quoted(current.title))")
                return
            }
            state.session?.activity.title = title
            publish(.watch, by: id)
            notify("\(displayName(id)) renamed \(ShownText.quoted(current.title)) to \(ShownText.quoted(title))", cause: .watch, by: id)
            return
        }
        let source = MediaSource.own(copy)
        share(Activity(id: "a\(nextActivityNumber)", url: nil, title: title ?? copy.neutralTitle, identifier: copy.identifier,
                       source: source, duration: copy.duration),
              cause: .watch, by: id, now: now)
        let shared = state.session?.activity.title ?? copy.neutralTitle
        notify("\(displayName(id)) shared their own copy of \(ShownText.quoted(shared)) "
               + "(\(OwnCopy.sizeText(copy.size)), \(copy.duration.clockText)): pick your copy of the file to watch; "
               + "nothing is uploaded", cause: .watch, by: id)
    }

    /// `/have <seq> yes|no`: whether this player has the own-copy item current
    /// since state `seq` (or later). A player that has it counts for readiness,
    /// coordinated starts and stalls from now on; one without it stops counting,
    /// and a group waiting only for it starts.
    mutating func haveReport(_ id: MemberID, seq: Int64, has: Bool, now: ServerInstant) {
        guard requirePlayer(id, .have), let member = members[id] else { return }
        guard state.session?.isActive == true, state.session?.activity.source.ownCopy != nil else {
            refuse(id, .notPossible, .have, "/have: the room is not watching an own copy; /watch own shares one")
            return
        }
        guard requireCurrentReport(seq, oldest: itemSeq, from: id, .have), member.copy != has else { return }
        modify(id) { $0.copy = has }
        announce(id, .copy)
        // One that has it is waited for from now on, like any player that joins;
        // one that has not may be the last a waiting group was waiting for.
        if !has { coordinationLost(now: now) }
    }

    /// A new item asks every player again.
    mutating func forgetCopies() {
        for member in members.values.sorted(by: { $0.arrival < $1.arrival }) where member.copy != nil {
            modify(member.id) { $0.copy = nil }
            announce(member.id, .copy)
        }
    }
}
