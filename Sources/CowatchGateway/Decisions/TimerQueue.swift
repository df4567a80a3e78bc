import CowatchCore
import CowatchTime

/// The rooms' timers, due in server time. Cancelling forgets a timer; a stale
/// heap entry is skipped when it surfaces.
struct TimerQueue {
    struct Key: Hashable {
        var room: RoomName
        var timer: RoomTimer
    }

    private var due: [Key: ServerInstant] = [:]
    /// Min-heap of (due, key).
    private var heap: [(ServerInstant, Key)] = []

    var isEmpty: Bool { due.isEmpty }
    var count: Int { due.count }

    mutating func schedule(_ timer: RoomTimer, in room: RoomName, at instant: ServerInstant) {
        let key = Key(room: room, timer: timer)
        due[key] = instant
        heap.append((instant, key))
        siftUp(heap.count - 1)
    }

    mutating func cancel(_ timer: RoomTimer, in room: RoomName) {
        due[Key(room: room, timer: timer)] = nil
    }

    /// Forgets every timer of a room that is gone.
    mutating func cancelAll(in room: RoomName) {
        due = due.filter { $0.key.room != room }
    }

    /// The earliest live due time, dropping stale entries on the way.
    mutating func nextDue() -> ServerInstant? {
        while let (when, key) = heap.first {
            if due[key] == when { return when }
            popHeap()
        }
        return nil
    }

    /// Removes and returns the timers due at or before `now`, earliest first.
    mutating func popDue(now: ServerInstant) -> [Key] {
        var fired: [Key] = []
        while let when = nextDue(), when <= now, let (_, key) = heap.first {
            popHeap()
            due[key] = nil
            fired.append(key)
        }
        return fired
    }

    private mutating func popHeap() {
        heap.swapAt(0, heap.count - 1)
        heap.removeLast()
        if !heap.isEmpty { siftDown(0) }
    }

    private mutating func siftUp(_ index: Int) {
        var child = index
        while child > 0 {
            let parent = (child - 1) / 2
            guard heap[child].0 < heap[parent].0 else { return }
            heap.swapAt(child, parent)
            child = parent
        }
    }

    private mutating func siftDown(_ index: Int) {
        var parent = index
        while true {
            let left = 2 * parent + 1
            let right = left + 1
            var smallest = parent
            if left < heap.count && heap[left].0 < heap[smallest].0 { smallest = left }
            if right < heap.count && heap[right].0 < heap[smallest].0 { smallest = right }
            guard smallest != parent else { return }
            heap.swapAt(parent, smallest)
            parent = smallest
        }
    }
}
