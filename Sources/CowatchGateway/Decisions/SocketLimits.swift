/// Every socket the server accepts, of any kind (plain HTTP, WebSocket, a
/// request it will refuse), counted per peer address and in total, and decided
/// on as it is accepted, before a byte is read: a stranger who opens sockets and
/// says nothing would otherwise use up the process's descriptors, and then
/// nobody, `/healthz` included, gets an answer. Pure: the gateway's libwebsockets
/// layer reports sockets opened and closed and carries the refusal out.
struct SocketLimits: Sendable, Equatable {
    /// Sockets from one peer address; a trusted proxy's are bounded by the total only.
    var perAddress: Int
    /// Sockets in all, kept under the descriptors the process may open.
    var total: Int
    private(set) var open: [String: Int] = [:]
    private(set) var openTotal = 0

    init(perAddress: Int, total: Int) {
        self.perAddress = perAddress
        self.total = total
    }

    enum Refusal: String, Equatable {
        case perAddress = "sockets-per-address"
        case total = "sockets"

        /// What the peer reads before its socket is closed.
        var response: String {
            let (status, body) = switch self {
            case .perAddress: ("429 Too Many Requests", "too many connections from your address\n")
            case .total: ("503 Service Unavailable", "this server is at its limit of connections; try again soon\n")
            }
            return "HTTP/1.1 \(status)\r\ncontent-type: text/plain; charset=utf-8\r\ncontent-length: \(body.utf8.count)\r\n"
                + "connection: close\r\n\r\n" + body
        }
    }

    /// Whether a socket from `address` may be taken; nil lets it in.
    func refusal(for address: String, trusted: Bool) -> Refusal? {
        if openTotal >= total { return .total }
        if !trusted, open[address, default: 0] >= perAddress { return .perAddress }
        return nil
    }

    mutating func opened(_ address: String) {
        open[address, default: 0] += 1
        openTotal += 1
    }

    mutating func closed(_ address: String) {
        guard let count = open[address] else { return }
        open[address] = count > 1 ? count - 1 : nil
        openTotal -= 1
    }

    /// Descriptors kept back from `total` for what the process opens itself: the
    /// store, the database, link checks, logs, the event loop.
    static let reservedDescriptors = 256

    /// The total a configured limit allows under a descriptor limit.
    static func total(configured: Int, descriptorLimit: Int) -> Int {
        max(1, min(configured, descriptorLimit - reservedDescriptors))
    }

    /// What the start-up log says of the total. A host who set `max-connections`
    /// above what the descriptors allow is warned; the default is only a ceiling,
    /// and a machine's descriptor limit lowering it is the normal case, said once
    /// as information rather than a warning at every start.
    static func startupNote(configured: Int, isDefault: Bool, descriptorLimit: Int) -> (warning: Bool, message: String)? {
        let total = total(configured: configured, descriptorLimit: descriptorLimit)
        guard total < configured else { return nil }
        return isDefault
            ? (false, "connections are bounded by the descriptor limit")
            : (true, "max-connections is above what the descriptor limit allows; using the lower figure")
    }
}
