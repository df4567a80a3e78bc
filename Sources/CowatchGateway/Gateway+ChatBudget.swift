import CowatchConnection
import CowatchCore
import CowatchTime

/// All rooms' chat kept for newcomers, held under one total (`chat-total-bytes`):
/// each room keeps at most `chat-history-bytes`, but many rooms together could
/// still take the server's memory.
extension Gateway {
    /// How often the total is added up: often enough that it is never far over,
    /// rarely enough that adding up every room's figure costs nothing.
    static let chatBudgetInterval = MonotonicDuration.seconds(5)

    /// Drops the oldest chat of empty rooms first (the longest empty first), then
    /// halves the largest histories of occupied rooms, until all together are
    /// within the budget. Only what newcomers are shown is dropped: nobody's
    /// screen changes.
    func keepChatWithinBudget() {
        var total = rooms.values.reduce(0) { $0 + $1.room.recentChatBytes }
        guard total > configuration.chatTotalBytes else { return }
        let before = total
        let empty = rooms.values.filter { $0.room.isEmpty && $0.room.recentChatBytes > 0 }
            .sorted { ($0.room.emptySince?.milliseconds ?? 0) < ($1.room.emptySince?.milliseconds ?? 0) }
        for entry in empty where total > configuration.chatTotalBytes {
            total -= entry.room.forgetChat(keepingBytes: 0)
        }
        while total > configuration.chatTotalBytes {
            guard let largest = rooms.values.max(by: { $0.room.recentChatBytes < $1.room.recentChatBytes }) else { break }
            let dropped = largest.room.forgetChat(keepingBytes: largest.room.recentChatBytes / 2)
            if dropped == 0 { break }
            total -= dropped
        }
        metrics.chatBytesDropped += before - total
        logger.notice("chat kept for newcomers over its total; oldest lines dropped",
                      metadata: ["total_bytes": "\(before)", "now_bytes": "\(total)", "limit": "\(configuration.chatTotalBytes)"])
    }
}
