/// How a connection whose outbox overflowed (its oldest frames dropped) is
/// brought level with its room again, by where its member's room is.
enum Resynchronization: Equatable {
    /// A member here whose room is on another node: the room's latest state as its
    /// relay link brought it, as the owner's own members get theirs (or asked of
    /// the owner when the link holds none yet).
    case latestFromLink
    /// A relay link from another node: every member it carries comes back for the
    /// room's state, so the link is closed for them to reconnect at once.
    case closeLink(code: UInt16, reason: String)
    /// A member of a room on this node: the room's state now.
    case roomState

    static func choose(relayedMember: Bool, isRelayLink: Bool) -> Resynchronization {
        if relayedMember { return .latestFromLink }
        if isRelayLink { return .closeLink(code: 4010, reason: "too far behind; reconnect now") }
        return .roomState
    }
}
