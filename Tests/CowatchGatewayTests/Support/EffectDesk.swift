@testable import CowatchGateway
import CowatchConnection
import CowatchCore
import CowatchStore
import CowatchTime
import Foundation
import Logging

/// A clock that moves only when told.
final class ManualTime: TimeSource, @unchecked Sendable {
    private let lock = NSLock()
    private var server = ServerInstant(milliseconds: 1_800_000_000_000)
    private var monotonicNow = MonotonicInstant(microseconds: 5_000_000)

    func now() -> ServerInstant { lock.withLock { server } }
    func monotonic() -> MonotonicInstant { lock.withLock { monotonicNow } }

    func advance(_ span: MonotonicDuration) {
        lock.withLock {
            server = server.advanced(by: ServerInterval(milliseconds: span.microseconds / 1000))
            monotonicNow = monotonicNow + span
        }
    }
}

/// A gateway with no socket, no database and no other node: an event goes in,
/// and what it does to the world comes out as values (`GatewayEffect`), carried
/// out as far as a gateway without a socket carries them (frames queued in each
/// connection's outbox, closes begun, the memory store written).
final class EffectDesk {
    let gateway: Gateway
    let time = ManualTime()
    let store = MemoryStore()

    /// `node`: a node of a cluster, whose database and other nodes are only asked, never reached.
    init(node: String? = nil, _ configure: (inout GatewayConfiguration) -> Void = { _ in }) {
        var configuration = GatewayConfiguration()
        configuration.mediaCheck.enabled = false
        configuration.clusterSecret = node == nil ? nil : "a secret of the cluster's"
        configure(&configuration)
        gateway = Gateway(configuration: configuration, store: store, cluster: nil,
                          clusterSettings: node.map { PostgresLeases.Settings(node: $0, advertiseURL: "ws://127.0.0.1:1/", hold: .seconds(90)) },
                          logger: Logger(label: "effects"), time: time)
        gateway.recordsEffects = true
    }

    /// One event, handled; what it decided, carried out and returned in order.
    @discardableResult
    func event(_ handle: (Gateway) -> Void) -> [GatewayEffect] {
        gateway.eventBegins()
        handle(gateway)
        return gateway.eventEnds()
    }

    /// A member's WebSocket connection, let in and opened.
    func connect(_ name: String, room: String = "lobby", address: String = "192.0.2.1",
                 encoding: Connection.Encoding = .json) -> (Connection, [GatewayEffect]) {
        let request = UpgradeRequest(room: RoomName(room), echo: false, name: name, resume: nil, player: true, join: true,
                                     owner: nil, device: nil, invite: nil, password: nil, token: nil, create: nil,
                                     origin: nil, hostHeader: nil, address: address)
        var id: UInt64 = 0
        let effects = event { gateway in
            precondition(gateway.admit(request) == nil)
            id = gateway.upgradeAccepted(request)
            gateway.established(id: id, encoding: encoding)
        }
        guard let connection = gateway.connections[id] else { fatalError("connection \(id) did not open") }
        return (connection, effects)
    }

    /// A line the member sends.
    func say(_ line: String, on connection: Connection) -> [GatewayEffect] {
        event { gateway in
            Array(line.utf8).withUnsafeBytes { bytes in
                gateway.received(bytes, binary: false, final: true, midFrame: false, on: connection)
            }
        }
    }

    func name(_ connection: Connection) -> String {
        connection.member.map { "\($0)" } ?? "c\(connection.id)"
    }

    /// Each effect in a line a test can compare: what it is, to whom, and the
    /// kind of each frame (a JSON event's `type`). Effects in a row that differ
    /// only by their connection are in the order of its number: the gateway
    /// goes through a room's members in no order of theirs.
    func lines(_ effects: [GatewayEffect]) -> [String] {
        var lines: [String] = []
        var run: [String] = []
        func sameButConnection(_ a: String, _ b: String) -> Bool {
            a.replacing(#/c\d+/#, with: "c") == b.replacing(#/c\d+/#, with: "c")
        }
        for line in described(effects) {
            if let last = run.last, !sameButConnection(last, line) {
                lines += run.sorted()
                run = []
            }
            run.append(line)
        }
        return lines + run.sorted()
    }

    private func described(_ effects: [GatewayEffect]) -> [String] {
        effects.map { effect in
            switch effect {
            case .send(let frames, let connection): "send \(frames.map(Self.kind).joined(separator: ",")) to c\(connection.id)"
            case .broadcast(let json, let text, let recipients):
                "broadcast \((json.map { [Self.kind($0)] } ?? text.map(Self.kind)).joined(separator: ",")) to "
                    + recipients.map { "c\($0.id)" }.sorted().joined(separator: ",")
            case .deliver(let frame, let recipients): "deliver \(frame.length) bytes to \(recipients.map { "c\($0.id)" }.joined(separator: ","))"
            case .close(let connection, let code, _): "close c\(connection.id) \(code)"
            case .requestWrite(let connection): "write c\(connection.id)"
            case .setReading(let connection, let paused): "\(paused ? "pause" : "resume") reading c\(connection.id)"
            case .drop(let connection): "drop c\(connection.id)"
            case .answer(let id, let response): "answer http \(id) \(response.status)"
            case .armRoomTimers: "arm room timers"
            case .armHousekeeping: "arm housekeeping"
            case .wakeLoop: "wake loop"
            case .store(let changes): "store " + changes.map(Self.kind).joined(separator: ",")
            case .flushStore: "flush store"
            case .own(let room, let epoch): "own \(room) \(epoch)"
            case .disown(let room): "disown \(room)"
            case .acquireLease(let room, _): "acquire lease \(room)"
            case .releaseLease(let room, let epoch): "release lease \(room) \(epoch)"
            case .extendCeiling(let room, _, _): "extend ceiling \(room)"
            case .renewLeases(let rooms): "renew leases " + rooms.map(\.rawValue).sorted().joined(separator: ",")
            case .shareOperatorChange: "share operator change"
            case .listClusterRooms: "list cluster rooms"
            case .stopLeases: "stop leases"
            case .openRelay(let id, let address, _): "open relay \(id) to \(address.host):\(address.port)"
            case .relaySend(let id, let up): "relay \(id) " + Self.kind(up)
            case .closeRelay(let id, let code): "close relay \(id) \(code)"
            case .checkMedia(let link, let id, _): "check \(link) for c\(id)"
            case .fetchSubtitles(let link, _, _): "fetch \(link)"
            case .openVoiceLink: "open voice link"
            case .closeVoiceLink: "close voice link"
            case .voiceSend(let text): "voice " + text
            }
        }
    }

    /// The words of a value's case, without its associated values.
    static func kind(_ value: Any) -> String {
        String(String(describing: value).prefix { $0 != "(" })
    }

    static func kind(_ frame: OutboundFrame) -> String {
        let text = String(decoding: frame.payload, as: UTF8.self)
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let type = object["type"] as? String else { return String(text.prefix(40)) }
        return type
    }
}

extension EffectDesk {
    /// What the connection's socket would be given now, in order (frames by
    /// kind, then `close CODE` when the close frame goes), as the libwebsockets
    /// layer takes it; each write handed back to the gateway.
    func written(_ connection: Connection) -> [String] {
        var out: [String] = []
        while true {
            switch connection.state.nextWrite(budget: 1 << 20, now: time.monotonic()) {
            case .nothing:
                return out
            case .frames(let frames):
                out += frames.map(Self.kind)
                event { $0.wrote(frames, on: connection, stillBuffered: false) }
            case .close(let frame):
                return out + ["close \(frame.code)"]
            }
        }
    }
}
