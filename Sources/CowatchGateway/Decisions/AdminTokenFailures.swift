import CowatchTime

/// Wrong admin tokens, by client address: an address that sends
/// `perMinute` wrong tokens within a minute of its first is refused unheard
/// until that minute ends, so that the token cannot be guessed at speed. A
/// right token clears its address. At most `trackedAddresses` are remembered
/// (past it, the finished minutes are dropped, then the oldest half), so that
/// strangers with many addresses cannot grow it without end. Not kept across
/// restarts.
struct AdminTokenFailures {
    struct Minute {
        var count: Int
        var since: ServerInstant
    }

    static let perMinute = 10
    static let minute = ServerInterval(milliseconds: 60_000)
    static let trackedAddresses = 4096
    private(set) var minutes: [String: Minute] = [:]

    /// Whether `address` is refused unheard at `now`.
    func refuses(_ address: String, at now: ServerInstant) -> Bool {
        guard let minute = minutes[address] else { return false }
        return minute.count >= Self.perMinute && now < minute.since.advanced(by: Self.minute)
    }

    mutating func failed(_ address: String, at now: ServerInstant) {
        var minute = minutes[address] ?? Minute(count: 0, since: now)
        if now >= minute.since.advanced(by: Self.minute) { minute = Minute(count: 0, since: now) }
        minute.count += 1
        if minutes[address] == nil, minutes.count >= Self.trackedAddresses { prune(at: now) }
        minutes[address] = minute
    }

    mutating func succeeded(_ address: String) {
        minutes[address] = nil
    }

    private mutating func prune(at now: ServerInstant) {
        minutes = minutes.filter { now < $0.value.since.advanced(by: Self.minute) }
        guard minutes.count >= Self.trackedAddresses else { return }
        let newest = minutes.sorted { $0.value.since > $1.value.since }.prefix(Self.trackedAddresses / 2)
        minutes = Dictionary(uniqueKeysWithValues: newest.map { ($0.key, $0.value) })
    }
}
