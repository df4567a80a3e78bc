import CowatchClient
import CowatchConnection
import CowatchCore
import CowatchTime

/// On the member's node: members of rooms another node owns, relayed there on
/// one shared link per room and owner (`RelayLinks` decides, and
/// `Gateway+Interpreter.swift` carries out what it decides).
/// The owner's side is `Gateway+RelayedMembers.swift`.
extension Gateway {
    /// A member being placed is to be relayed to the owner at `base`.
    func relay(_ connection: Connection, to base: String) {
        guard let cluster, case .placing(let placing) = connection.route, let room = placing.request.room else { return }
        let upgrade = RelayedUpgrade(placing.request, encoding: connection.encoding == .text ? .text : .json)
        // Placed until the link opens: its lines stay held until then.
        tables.routed(connection, .relayed(nil, placing: placing))
        run(relaying: cluster.relayLinks.relay(connection.id, upgrade, room: room, url: base))
    }

    func openLink(_ id: RelayLinks.LinkID, room: RoomName, url base: String) {
        guard let cluster else { return }
        let trimmed = base.hasSuffix("/") ? String(base.dropLast()) : base
        guard let address = WebSocketAddress(trimmed + "/relay/\(room)") else {
            logger.warning("a node's advertised address is not a WebSocket address", metadata: ["url": "\(base)"])
            run(relaying: cluster.relayLinks.closed(id, code: nil, reason: "", movedCode: Self.relayCloseMeansMoved))
            return
        }
        guard let secret = configuration.clusterSecret else {
            logger.error("cannot relay members to the node that owns their room: this node has no cluster-secret-file",
                         metadata: ["room": "\(room)", "owner": "\(base)"])
            run(relaying: cluster.relayLinks.closed(id, code: nil, reason: "", movedCode: Self.relayCloseMeansMoved))
            return
        }
        var generator = SystemRandomNumberGenerator()
        let nonce = (0..<2).map { _ in String(generator.next() as UInt64, radix: 16) }.joined()
        let proof = RelayProof.make(secret: secret, room: room, node: cluster.settings.node, at: eventTime.server, nonce: nonce)
        emit(.openRelay(id, address, proof: proof))
    }

    // MARK: - The link's events

    func relayOpened(_ id: RelayLinks.LinkID) {
        guard let cluster else { return }
        cluster.relayLinks.heard(id, at: eventTime.monotonic)
        run(relaying: cluster.relayLinks.opened(id))
    }

    func relayReceived(_ id: RelayLinks.LinkID, _ text: String) {
        guard let cluster else { return }
        cluster.relayLinks.heard(id, at: eventTime.monotonic)
        guard let down = RelayWire.decodeDown(text.utf8), let actions = cluster.relayLinks.received(down, on: id) else {
            logger.warning("a relay link said what it may not; closing it", metadata: ["link": "\(id)"])
            emit(.closeRelay(id, code: 1002))
            return
        }
        run(relaying: actions)
    }

    func relayClosed(_ id: RelayLinks.LinkID, _ info: CloseInfo) {
        guard let cluster else { return }
        tables.upstreamClosed(id)
        run(relaying: cluster.relayLinks.closed(id, code: info.code, reason: info.reason, movedCode: Self.relayCloseMeansMoved))
    }

    /// A relayed member's connection ended here: the owner is told.
    func relayedMemberGone(_ connection: Connection) {
        guard let cluster, connection.route.isRelayed else { return }
        run(relaying: cluster.relayLinks.gone(connection.id, leaving: connection.leaving))
    }
}

extension RelayedUpgrade {
    /// What the member's own upgrade asked for, for the owner to read.
    init(_ request: UpgradeRequest, encoding: RelayEncoding) {
        self.init(encoding: encoding, address: request.address, name: request.name, resume: request.resume,
                  player: request.player, join: request.join, owner: request.owner, device: request.device,
                  software: request.software, invite: request.invite, password: request.password, token: request.token, create: request.create)
    }
}

extension UpgradeRequest {
    /// A relayed member's upgrade, as the owner takes it: its address is the one
    /// its node saw (the link comes from a trusted node).
    init(relayed upgrade: RelayedUpgrade, room: RoomName) {
        self.init(room: room, echo: false, name: upgrade.name, resume: upgrade.resume, player: upgrade.player,
                  join: upgrade.join, owner: upgrade.owner, device: upgrade.device, invite: upgrade.invite,
                  password: upgrade.password, token: upgrade.token, create: upgrade.create, origin: nil,
                  hostHeader: nil, address: upgrade.address)
        software = upgrade.software
    }
}
