/// Places for work the server does on a stranger's behalf (a link checked, a
/// subtitle track fetched): at most `perAddress` for one client address, so
/// that one stranger with slow links cannot take every place, and `total` in
/// all, so that the threads and sockets they use stay bounded.
struct WorkPlaces: Equatable {
    struct Limits: Equatable {
        var perAddress: Int
        var total: Int
    }

    enum Answer: Equatable {
        case granted
        /// The address holds its share.
        case addressBusy
        /// Every place is taken.
        case serverBusy
    }

    let limits: Limits
    private(set) var inUse = 0
    private(set) var byAddress: [String: Int] = [:]

    init(_ limits: Limits) {
        self.limits = limits
    }

    /// A place for `address`, taken when granted.
    mutating func take(for address: String) -> Answer {
        guard byAddress[address, default: 0] < limits.perAddress else { return .addressBusy }
        guard inUse < limits.total else { return .serverBusy }
        inUse += 1
        byAddress[address, default: 0] += 1
        return .granted
    }

    /// The work of `address` is done: its place is free.
    mutating func give(back address: String) {
        guard let count = byAddress[address] else { return }
        byAddress[address] = count > 1 ? count - 1 : nil
        inUse -= 1
    }
}
