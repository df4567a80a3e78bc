import CowatchClient

/// The counters of one phase, read by the command from its own thread.
public struct LoadProgress: Sendable {
    public var opened = 0
    /// Members that have received their first `state` (the welcome is complete).
    public var welcomed = 0
    /// Connections that ended without being asked to.
    public var failed = 0
    public var firstFailure: String?
    /// `error` frames the controllers received (commands the server refused).
    public var refusals = 0
    /// Every frame received.
    public var frames = 0
    public var roomsFinished = 0
}

/// What one phase of commands measured, over every room.
public struct PhaseResults: Sendable {
    /// Nanoseconds from a command's sending to one member's receipt of the
    /// resulting `state`: one per member per command, sorted.
    public var memberLatencies: [UInt64]
    /// Nanoseconds from a command's sending to the receipt by the last member of
    /// its room: one per command that reached every member, sorted.
    public var lastMemberLatencies: [UInt64]
    /// With several servers: index 0, the members connected to the first server
    /// (where each room was created, so its owner in a cluster); index 1, the
    /// members on the others (relayed to the owner). Each member's latencies,
    /// and per command the latency to the group's last member, sorted. Empty
    /// with one server.
    public var serverGroupLatencies: [[UInt64]]
    public var serverGroupLastLatencies: [[UInt64]]
    /// Commands sent, and the commands the phase was to send.
    public var commandsSent: Int
    public var commandsPlanned: Int
    /// Frames of any type received from the first command's sending to the last
    /// command's completion (each command also brings every member a `notice`).
    public var frames: Int
    /// From the first command's sending to the last command's completion; with
    /// a fixed schedule at least its rounds times its interval.
    public var seconds: Double
    /// With a fixed schedule, how late the latest send went, in seconds.
    public var scheduleLag: Double
    /// `error` frames the controllers received: commands the server refused,
    /// after which the pairing of commands and states would be wrong.
    public var refusals: Int
    public var completed: Bool

    /// `state` frames received as the result of the phase's commands.
    public var stateDeliveries: Int { memberLatencies.count }
}

/// Nearest-rank percentiles of sorted nanoseconds, in milliseconds.
public enum Percentile {
    public static func milliseconds(_ sorted: [UInt64], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        let index = min(sorted.count - 1, max(0, rank - 1))
        return Double(sorted[index]) / 1_000_000
    }
}
