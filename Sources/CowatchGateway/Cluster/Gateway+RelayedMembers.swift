import CowatchConnection
import CowatchCore
import CowatchTime

/// On a room's owner: other nodes' shared links for the room (connections of
/// encoding `relay`), and the members each carries. A carried member is a
/// `Connection` like any other to its room (its rate, its moderation, its
/// replies), without a socket: what is sent to it goes down its link with its
/// number, and a room's broadcast goes down each link once per encoding. The
/// member's node is `Gateway+Relaying.swift`.
extension Gateway {
    /// Bytes a link's message may have beyond a member's: a join's upgrade.
    static let relayMessageAllowance = 16 << 10

    /// The limits of a link: a member's, with room for many members' replies.
    var relayLinkLimits: ConnectionLimits {
        var limits = connectionLimits
        limits.outboxLimit = max(limits.outboxLimit, configuration.relayOutboxLimit)
        limits.readPauseBacklog = max(limits.readPauseBacklog, configuration.relayOutboxLimit / 4)
        return limits
    }

    /// A node's link for `room` opened here.
    func relayLinkOpened(_ link: Connection, room name: RoomName) {
        guard let entry = rooms[name] else {
            // Taken elsewhere since the upgrade was let in.
            close(link, code: 4010, reason: "this node does not serve the room; reconnect now")
            return
        }
        tables.attached(link, to: entry)
    }

    /// One message from a link.
    func relayLinkReceived(_ message: [UInt8], on link: Connection) {
        guard let up = RelayWire.decodeUp(message) else {
            close(link, code: 1002, reason: "not a relay message")
            return
        }
        switch up {
        case .join(let number, let upgrade):
            carriedJoined(number, upgrade, on: link)
        case .message(let number, let bytes):
            guard let member = link.carried[number], member.state.isOpen else { return }
            guard bytes.count <= configuration.maximumMessageBytes else {
                close(member, code: 1009, reason: "message too big")
                return
            }
            handleMessage(bytes, on: member)
        case .gone(let number, let leaving):
            guard let member = link.carried[number] else { return }
            tables.leaving(member, leaving)
            detachCarried(member)
            leaveRoom(member)
        case .ping:
            sendDown(.pong, on: link)
        case .resynchronize(let number):
            guard let member = link.carried[number], member.state.isOpen, let name = member.room,
                  let entry = rooms[name] else { return }
            send(.state(entry.room.state), to: member)
        case .roundTrip(let number, let milliseconds):
            guard let member = link.carried[number], let name = member.room, let id = member.member,
                  let entry = rooms[name] else { return }
            // The member's own round trip to its node, plus the link's.
            let measured = ServerInterval(milliseconds: Int64(milliseconds) + (link.linkRoundTrip ?? 0))
            run(entry.room.roundTripMeasured(measured, for: id, now: eventTime.server), in: entry)
        }
    }

    private func carriedJoined(_ number: RelayNumber, _ upgrade: RelayedUpgrade, on link: Connection) {
        guard link.state.isOpen, let name = link.room else { return }
        guard link.carried[number] == nil, link.carried.count < configuration.room.maximumMembers else {
            close(link, code: 1008, reason: "a relay link's member numbers are its own and bounded by max-members")
            return
        }
        let now = eventTime.monotonic
        let member = Connection(
            id: tables.numberCarried(), address: upgrade.address, encoding: upgrade.encoding == .text ? .text : .json,
            state: ConnectionState(limits: connectionLimits,
                                   rules: ConnectionState.MessageRules(maximumBytes: configuration.maximumMessageBytes, acceptsBinary: false),
                                   now: now, firstPingAfter: connectionLimits.pingInterval),
            maximumHeldLines: configuration.maximumHeldLines)
        tables.carried(member, on: link, number)
        // Whatever comes down after this may be for the member.
        sendDown(.joined(number), on: link)
        if state.operatorBanned(upgrade.address, at: eventTime.server) {
            close(member, code: 4003, reason: "this address may not connect to this server")
            return
        }
        guard rooms[name] != nil else {
            close(member, code: 4010, reason: "the room moved to another node; reconnect now")
            return
        }
        join(member, UpgradeRequest(relayed: upgrade, room: name), room: name)
    }

    /// The member is no longer on its link.
    func detachCarried(_ member: Connection) {
        tables.uncarried(member)
    }

    /// The link closed or is closing: the members it carried are gone from
    /// here, each keeping its resume grace (its node tells it to reconnect).
    func relayLinkGone(_ link: Connection) {
        tables.detached(link)
        for number in link.carried.keys.sorted() {
            guard let member = link.carried[number] else { continue }
            detachCarried(member)
            leaveRoom(member)
        }
    }

    /// A link's frame for these recipients: the payload the owner already
    /// made, behind the link's header.
    func sendDown(_ recipients: RelayRecipients, _ frame: OutboundFrame, on link: Connection) {
        emit(.send([Self.linkFrame(recipients, frame)], to: link))
    }

    func sendDown(_ down: RelayDown, on link: Connection) {
        emit(.send([OutboundFrame(RelayWire.encode(down), kind: .text, createdAt: eventTime.monotonic)], to: link))
    }

    /// The payload the owner already made, behind the link's header for these recipients.
    static func linkFrame(_ recipients: RelayRecipients, _ frame: OutboundFrame) -> OutboundFrame {
        let header = RelayWire.header(recipients)
        var bytes = [UInt8]()
        bytes.reserveCapacity(header.count + frame.length)
        bytes += header
        bytes += frame.payload
        return OutboundFrame(bytes, kind: .text, createdAt: frame.createdAt)
    }
}
