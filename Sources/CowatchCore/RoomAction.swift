/// What the room asks its host (the gateway) to do, in order.
public enum RoomAction: Hashable, Sendable {
    /// To every connected member but `except`. One event, however many recipients:
    /// the gateway encodes it once and fans the bytes out.
    case broadcast(RoomEvent, except: MemberID? = nil)
    case send(RoomEvent, to: MemberID)
    /// Call `timerFired(_:now:)` with this timer at (or after) the instant.
    case schedule(RoomTimer, at: ServerInstant)
    case cancel(RoomTimer)
    /// Close this member's connection (it was kicked); the room has already forgotten it.
    case disconnect(MemberID, reason: String)
    /// Keep this snapshot so the room survives a restart.
    case persist(RoomSnapshot)
}

/// The timers a room may arm. Each carries what it was armed for, so a timer that
/// fires after the situation moved on is recognised and ignored.
public enum RoomTimer: Hashable, Sendable {
    /// The wait limit of the coordinated start whose readiness anchor is `anchor`.
    case waitLimit(anchor: Int64)
    /// The end of a member's catch-up replay.
    case catchupEnds(MemberID, serial: Int64)
    /// The end of a disconnected member's resume grace period.
    case resumeExpires(MemberID, serial: Int64)
}

/// The room-level state to persist: what a restart needs to bring the room back.
public struct RoomSnapshot: Hashable, Sendable {
    public var room: RoomName
    public var state: RoomState
}
