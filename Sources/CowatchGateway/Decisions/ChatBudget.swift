import CowatchCore
import CowatchTime

/// Which rooms lose the chat they keep for newcomers when all rooms' together
/// is over its total (`chat-total-bytes`): each room keeps at most
/// `chat-history-bytes`, but many rooms could still take the server's memory.
///
/// Empty rooms first, the longest empty first, down to their newest line; then
/// the largest history among the rest is halved, again and again, until the
/// total is within the limit. Only what newcomers are shown is dropped: nobody's
/// screen changes.
enum ChatBudget {
    /// One room's figure.
    struct RoomChat: Equatable {
        var room: RoomName
        var bytes: Int
        /// When the room became empty; nil while anyone is in it.
        var emptySince: ServerInstant?
    }

    enum Cut: Equatable {
        /// All of an empty room's history but its newest line.
        case forget(RoomName)
        /// The oldest lines of a room, keeping at most this many bytes (and its newest line).
        case halve(RoomName, keepingBytes: Int)
    }

    /// The cuts, in order, that bring `rooms` within `limit`; `cut` carries one
    /// out and answers how many bytes it dropped (whole lines go, so not always
    /// what was asked). Returns the total before and after, or nil when it was
    /// within the limit.
    static func keep(_ rooms: [RoomChat], within limit: Int, cut: (Cut) -> Int) -> (before: Int, after: Int)? {
        var total = rooms.reduce(0) { $0 + $1.bytes }
        guard total > limit else { return nil }
        let before = total
        var bytes = Dictionary(rooms.map { ($0.room, $0.bytes) }, uniquingKeysWith: +)
        let empty = rooms.filter { $0.emptySince != nil && $0.bytes > 0 }
            .sorted { ($0.emptySince?.milliseconds ?? 0) < ($1.emptySince?.milliseconds ?? 0) }
        for room in empty where total > limit {
            let dropped = cut(.forget(room.room))
            total -= dropped
            bytes[room.room, default: 0] -= dropped
        }
        while total > limit {
            // The first of the largest, in the order given, so that ties are decided the same way every time.
            guard let largest = rooms.map(\.room).max(by: { bytes[$0, default: 0] < bytes[$1, default: 0] }) else { break }
            let dropped = cut(.halve(largest, keepingBytes: bytes[largest, default: 0] / 2))
            if dropped == 0 { break }
            total -= dropped
            bytes[largest, default: 0] -= dropped
        }
        return (before, total)
    }
}
