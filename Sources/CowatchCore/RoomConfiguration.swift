/// Limits and timings of a room. Every value is explicit so the server's
/// configuration can set it; the defaults suit a community server.
public struct RoomConfiguration: Hashable, Sendable {
    /// Members (connected or within their resume grace) a room accepts.
    public var maximumMembers: Int
    public var maximumQueueLength: Int
    /// How long a disconnected member's identity is kept for `resume`.
    public var resumeGrace: ServerInterval
    /// The shortest lead of a coordinated start: time for clients to schedule a
    /// start even when measured round trips are tiny.
    public var minimumLead: ServerInterval
    /// The contract caps a start's lead at one second.
    public var maximumLead: ServerInterval
    /// Added to the slowest measured round trip.
    public var leadMargin: ServerInterval
    /// The policy of a new room.
    public var defaultPolicy: RoomPolicy
    /// Chat lines a room keeps for newcomers and restarts.
    public var chatHistory: Int

    public init(
        maximumMembers: Int = 1_000,
        maximumQueueLength: Int = 100,
        resumeGrace: ServerInterval = ServerInterval(milliseconds: 60_000),
        minimumLead: ServerInterval = ServerInterval(milliseconds: 150),
        maximumLead: ServerInterval = ServerInterval(milliseconds: 1_000),
        leadMargin: ServerInterval = ServerInterval(milliseconds: 50),
        defaultPolicy: RoomPolicy = RoomPolicy(),
        chatHistory: Int = 200
    ) {
        self.maximumMembers = maximumMembers
        self.maximumQueueLength = maximumQueueLength
        self.resumeGrace = resumeGrace
        self.minimumLead = minimumLead
        self.maximumLead = maximumLead
        self.leadMargin = leadMargin
        self.defaultPolicy = defaultPolicy
        self.chatHistory = chatHistory
    }
}
