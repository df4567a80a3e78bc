import CowatchConnection
import CowatchTime

/// How many rooms one address may create: at most `perMinute` in a window of a
/// minute that starts with its first creation. Without it one stranger could
/// fill the server's `max-rooms` in seconds (and the rooms would be kept). A
/// value: the gateway asks before an upgrade and records each room created.
struct RoomCreationLimit: Sendable {
    struct Window: Sendable, Hashable {
        var start: MonotonicInstant
        var count: Int
    }

    /// 0 turns the limit off.
    let perMinute: Int
    private(set) var windows: [String: Window] = [:]
    static let window = MonotonicDuration.seconds(60)
    /// Addresses remembered at once; past it the finished windows are dropped,
    /// and if every one is still running, the oldest half.
    static let trackedAddresses = 65_536

    init(perMinute: Int) {
        self.perMinute = perMinute
    }

    /// How long `address` must wait before it may create a room; nil: it may now.
    func wait(for address: String, now: MonotonicInstant) -> MonotonicDuration? {
        guard perMinute > 0, let window = windows[address], now < window.start + Self.window,
              window.count >= perMinute else { return nil }
        return (window.start + Self.window) - now
    }

    /// A room was created for `address`.
    mutating func record(_ address: String, now: MonotonicInstant) {
        guard perMinute > 0 else { return }
        if var window = windows[address], now < window.start + Self.window {
            window.count += 1
            windows[address] = window
            return
        }
        if windows.count >= Self.trackedAddresses { prune(now: now) }
        windows[address] = Window(start: now, count: 1)
    }

    private mutating func prune(now: MonotonicInstant) {
        windows = windows.filter { now < $0.value.start + Self.window }
        guard windows.count >= Self.trackedAddresses else { return }
        let newest = windows.sorted { $0.value.start > $1.value.start }.prefix(Self.trackedAddresses / 2)
        windows = Dictionary(uniqueKeysWithValues: newest.map { ($0.key, $0.value) })
    }
}
