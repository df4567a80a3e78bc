import CowatchClient
import CowatchTime
import Foundation
import Logging

/// Carries out what every `RoomRelay` decides, for `cowatch bridge`: the one
/// place that opens room connections (on one `WebSocketClients`), routes
/// network events to the relays of their channel, passes the relays' words to
/// their network, and keeps their timers. Everything happens one event at a
/// time on `queue`.
public final class BridgeRunner: @unchecked Sendable {
    /// One channel-room pair: its rules, the network it is on, and where its room is.
    public struct Pair: Sendable {
        public var relay: RoomRelay.Settings
        /// An index into the runner's networks.
        public var network: Int
        /// The room's WebSocket address, `ws://HOST:PORT/rooms/ROOM`.
        public var room: WebSocketAddress
        /// The room's password, when it asks one.
        public var password: String?
        /// A bot token for the watcher (`/token`), so that it shows as a bot.
        public var token: String?
        /// Where the owner key of a room the bridge founds is written (`OwnerKeyFile`).
        public var ownerKeyDirectory: String

        public init(relay: RoomRelay.Settings, network: Int, room: WebSocketAddress, password: String?, token: String?,
                    ownerKeyDirectory: String) {
            self.relay = relay
            self.network = network
            self.room = room
            self.password = password
            self.token = token
            self.ownerKeyDirectory = ownerKeyDirectory
        }
    }

    private struct ConnectionKey: Hashable {
        var pair: Int
        var connection: RoomRelay.Connection
    }

    private let queue = DispatchQueue(label: "cowatch-bridge")
    private let pairs: [Pair]
    private let networks: [any ChatNetwork]
    private let clients: WebSocketClients
    private let logger: Logger
    /// Where events are timed and timers set.
    private let time: any TimeSource
    // On `queue` only.
    private var relays: [RoomRelay]
    private var connections: [ConnectionKey: (attempt: Int, connection: ClientConnection)] = [:]

    public init(pairs: [Pair], networks: [any ChatNetwork], connectTimeout: MonotonicDuration,
                trust: ClientTrust = .system, logger: Logger, time: any TimeSource = SystemTime()) throws {
        self.pairs = pairs
        self.time = time
        self.networks = networks
        self.logger = logger
        relays = pairs.enumerated().map { index, pair in
            RoomRelay(settings: pair.relay, seed: Backoff.seed("\(index)\u{0}\(pair.relay.channel)\u{0}\(pair.relay.room)"))
        }
        clients = try WebSocketClients(connectTimeout: connectTimeout, trust: trust)
    }

    public func start() {
        queue.async { [self] in
            for (index, network) in networks.enumerated() {
                network.start { [self] event in queue.async { [self] in route(event, from: index) } }
            }
            for index in relays.indices { run(index, .start(now: time.monotonic())) }
        }
    }

    /// Closes every room connection, leaves every network, and stops.
    public func stop() {
        queue.sync { [self] in
            for index in relays.indices { run(index, .stop) }
        }
        for network in networks { network.stop() }
        clients.shutdown()
    }

    /// A channel's events go to that channel's relays; a person leaving the
    /// network or changing nick concerns every relay of the network; a line to
    /// the bot alone is answered once.
    private func route(_ event: NetworkEvent, from network: Int) {
        let mine = pairs.indices.filter { pairs[$0].network == network }
        let targets: [Int]
        switch event {
        case .joined(let channel), .parted(let channel, _), .present(let channel, _), .message(let channel, _, _, _),
             .left(let channel, _):
            targets = mine.filter { pairs[$0].relay.channel == channel }
        case .quit, .renamed:
            targets = mine
        case .direct:
            targets = Array(mine.prefix(1))
        }
        for index in targets { run(index, .network(event, now: time.monotonic())) }
    }

    private func run(_ index: Int, _ event: RoomRelay.Event) {
        for action in relays[index].handle(event) { perform(index, action) }
    }

    private func perform(_ index: Int, _ action: RoomRelay.Action) {
        let pair = pairs[index]
        switch action {
        case .open(let connection, let attempt, let identity):
            var address = pair.room.adding("name", identity.name).adding("device", identity.device)
            if let resume = identity.resume { address = address.adding("resume", resume) }
            if !identity.joinsSession { address = address.adding("join", "0") }
            if let password = pair.password { address = address.adding("password", password) }
            if identity.isWatcher, let token = pair.token { address = address.adding("token", token) }
            let headers = identity.forwardedFor.map { [(name: "X-Forwarded-For", value: $0)] } ?? []
            let key = ConnectionKey(pair: index, connection: connection)
            let opened = clients.connect(address, encoding: .json, handlers: ClientHandlers(
                opened: { [self] in queue.async { [self] in run(index, .opened(connection, attempt, now: time.monotonic())) } },
                received: { [self] text in queue.async { [self] in run(index, .received(connection, attempt, text, now: time.monotonic())) } },
                closed: { [self] info in
                    queue.async { [self] in
                        if connections[key]?.attempt == attempt { connections[key] = nil }
                        run(index, .closed(connection, attempt, info, now: time.monotonic()))
                    }
                }), headers: headers)
            connections[key] = (attempt, opened)
        case .send(let connection, let text):
            connections[ConnectionKey(pair: index, connection: connection)]?.connection.send(text)
        case .close(let connection):
            connections[ConnectionKey(pair: index, connection: connection)]?.connection.close()
        case .schedule(let timer, let delay):
            time.schedule(after: delay, on: queue) { [self] in run(index, .timerFired(timer, now: time.monotonic())) }
        case .network(let command):
            networks[pair.network].perform(command)
        case .log(let entry):
            logger.log(entry, ["channel": pair.relay.channel, "room": pair.relay.room])
        case .keepOwnerKey(let key):
            let metadata = ["channel": pair.relay.channel, "room": pair.relay.room]
            switch OwnerKeyFile.write(key, room: pair.relay.room, link: pair.relay.link, directory: pair.ownerKeyDirectory) {
            case .success(let path):
                logger.log(LogEntry(.notice, "the bridge created the room; its owner key is kept in \(path) (readable by the bridge's user alone)",
                                    ["owner_key_file": path]), metadata)
            case .failure(let problem):
                // Nobody else holds the key: the log is where it can still be found.
                logger.log(LogEntry(.warning, "the bridge created the room, but its owner key could not be kept in a file; ?owner=KEY on the room's page makes its holder the owner",
                                    ["owner_key": key, "problem": problem.message]), metadata)
            }
        }
    }
}
