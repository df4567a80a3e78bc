/// A time as typed in a command: `95`, `95.5`, `1:35`, `1:01:35` are absolute;
/// `+10` and `-10` are relative to the group's position when the command is handled.
public enum TimeArgument: Hashable, Sendable {
    case absolute(MediaTime)
    /// Signed seconds.
    case relative(Double)

    /// The position this argument names, given the group's position now.
    public func resolved(from current: MediaTime) -> MediaTime {
        switch self {
        case .absolute(let time): time
        case .relative(let delta): current.offset(by: delta)
        }
    }
}
