import CowatchConnection
import CowatchTime
import SlashCommands

/// Where a connection's lines go (`Connection.route`): one of four places, so
/// that a connection is never half in one and half in another.
enum Route {
    /// Its room is on this node: lines are read and go to the room.
    case local
    /// Its room is on this node, and a link it shared is being checked
    /// (`Gateway+MediaCheck.swift`): its later lines wait behind that one.
    case checking(Gateway.PendingMediaCheck)
    /// In a cluster, waiting to learn which node serves its room
    /// (`Gateway+Cluster.swift`).
    case placing(Placement)
    /// In a cluster, relayed to the node that serves its room, on that node's
    /// shared link for the room (`RelayLinks`). Until the link is open, the
    /// placement is kept: if it never opens, the connection is placed again.
    case relayed(RelayLink?, placing: Placement?)

    /// The upgrade of a connection being placed, and since when it waits (it is
    /// given up after `Gateway.placementPatience`).
    struct Placement {
        var request: UpgradeRequest
        var since: MonotonicInstant
    }

    /// While a link is checked, a room placed or its node reached, what the
    /// connection sends is held (`HeldLines`); `nil` when lines go through.
    var holdsBecause: String? {
        switch self {
        case .local: nil
        case .checking: "a link is checked"
        case .placing: "the room is being placed on a node"
        case .relayed(_, let placing): placing == nil ? nil : "the room's node is being reached"
        }
    }

    var isRelayed: Bool {
        if case .relayed = self { true } else { false }
    }
}

/// Where a relayed member is: its room's shared link, and its number there.
struct RelayLink: Equatable {
    var link: RelayLinks.LinkID
    var number: RelayNumber
}

/// A line that waits for its connection's route: a message not read yet (its
/// room not reached: it is read, or relayed, once it is) or a line already read
/// and admitted by the command rate (behind a link being checked).
enum HeldLine {
    case message([UInt8])
    case parsed(Result<InputLine, CommandError>)
}

/// The lines a connection holds while its route holds them: one queue, bounded
/// by `max-held-lines`, with one rule when full: the line is refused in words
/// (`Gateway.hold`), never dropped unseen.
struct HeldLines {
    let limit: Int
    private var lines: [HeldLine] = []

    init(limit: Int) {
        self.limit = limit
    }

    var isEmpty: Bool { lines.isEmpty }

    /// Holds `line`; false when the queue is full.
    mutating func hold(_ line: HeldLine) -> Bool {
        guard lines.count < limit else { return false }
        lines.append(line)
        return true
    }

    /// Everything held, in order, leaving the queue empty.
    mutating func takeAll() -> [HeldLine] {
        defer { lines = [] }
        return lines
    }

    /// Lines taken out and not yet passed on (their route holds again): they go
    /// back after what their own passing on held, which came before them. Never
    /// refused: they were within the bound when held, and a message's own lines
    /// are bounded by the message size.
    mutating func restore(_ rest: [HeldLine]) {
        lines += rest
    }
}
