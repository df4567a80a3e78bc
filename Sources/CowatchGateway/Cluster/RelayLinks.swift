import CowatchCore
import CowatchTime

/// On a node that relays members to rooms other nodes own: one shared link per
/// room and owner (`RelayWire`), and who is on it. A value: events in, actions
/// out, carried out by `Gateway+Relaying.swift`; its rules are tested without
/// sockets in `Tests/CowatchGatewayTests/RelayLinksTests.swift`.
///
/// A member on a link is *pending* until the link opens (its `join` goes up
/// then), *joining* until the owner answers its `join` (`joined`), and *joined*
/// after: only then does a frame for everyone on the link reach it, so that no
/// member sees a room's event before its own welcome.
struct RelayLinks {
    typealias LinkID = UInt64
    typealias ConnectionID = UInt64

    struct Member: Equatable {
        var connection: ConnectionID
        var encoding: RelayEncoding
        var upgrade: RelayedUpgrade
        var phase: Phase
    }

    enum Phase: Equatable {
        case pending, joining, joined
    }

    struct Link: Equatable {
        let id: LinkID
        let room: RoomName
        /// The owner's address (`advertise-url`) this link goes to.
        let url: String
        var open = false
        var members: [RelayNumber: Member] = [:]
        var nextNumber: RelayNumber = 1
        /// The room's latest `state`, per encoding, as it came down.
        var latestState: [RelayEncoding: [UInt8]] = [:]
        /// When the owner was last heard on the link (it opened, or anything came down).
        var lastHeard: MonotonicInstant?
        var pingSent = false
    }

    enum Action: Equatable {
        /// Open the link to the owner of `room` at `url`.
        case open(LinkID, room: RoomName, url: String)
        case send(LinkID, RelayUp)
        /// Close the link (it carries nobody any more).
        case close(LinkID)
        /// The same payload, framed once, to each of these connections.
        case deliver([UInt8], to: [ConnectionID])
        /// Lines go up from now on: the member's held lines follow its `join`.
        case relaying(ConnectionID, LinkID, RelayNumber)
        /// Its link never opened: the member waits to be placed again.
        case placeAgain(ConnectionID)
        /// The owner, or the link's end, closes the member with this code.
        case closeMember(ConnectionID, code: UInt16, reason: String)
    }

    /// A link the owner has not been heard on for `timeout` is given up (its
    /// members are told to reconnect); after a quarter of that it is pinged.
    let timeout: MonotonicDuration
    private(set) var links: [LinkID: Link] = [:]
    private var byOwner: [String: LinkID] = [:]
    private var byConnection: [ConnectionID: (link: LinkID, number: RelayNumber)] = [:]
    private var nextLinkID: LinkID = 1

    /// The members relayed from here, on all links.
    var relayedMembers: Int { byConnection.count }

    init(timeout: MonotonicDuration = .seconds(10)) {
        self.timeout = timeout
    }

    /// The owner was heard on the link: it opened, or something came down.
    mutating func heard(_ id: LinkID, at now: MonotonicInstant) {
        guard var link = links[id] else { return }
        link.lastHeard = now
        link.pingSent = false
        links[id] = link
    }

    /// Every housekeeping pass: a link quiet for a quarter of `timeout` is
    /// pinged; one quiet for all of it is given up, its members told to reconnect.
    mutating func tick(at now: MonotonicInstant) -> [Action] {
        var actions: [Action] = []
        for id in links.keys.sorted() {
            guard var link = links[id], link.open, let lastHeard = link.lastHeard else { continue }
            if now - lastHeard >= timeout {
                actions.append(.close(id))
                actions += closed(id, code: nil, reason: "", movedCode: { _ in true })
            } else if now - lastHeard >= MonotonicDuration(microseconds: timeout.microseconds / 4), !link.pingSent {
                link.pingSent = true
                links[id] = link
                actions.append(.send(id, .ping))
            }
        }
        return actions
    }

    private static func key(_ room: RoomName, _ url: String) -> String { "\(room) \(url)" }

    /// A member of `room`, which the node at `url` owns, is to be relayed there:
    /// on the link already open (or opening) to it, or on a new one.
    mutating func relay(_ connection: ConnectionID, _ upgrade: RelayedUpgrade, room: RoomName, url: String) -> [Action] {
        var actions: [Action] = []
        if byConnection[connection] != nil { actions += gone(connection, leaving: false) }
        let id: LinkID
        if let existing = byOwner[Self.key(room, url)] {
            id = existing
        } else {
            id = nextLinkID
            nextLinkID += 1
            links[id] = Link(id: id, room: room, url: url)
            byOwner[Self.key(room, url)] = id
            actions.append(.open(id, room: room, url: url))
        }
        guard var link = links[id] else { return actions }
        let number = link.nextNumber
        link.nextNumber += 1
        var member = Member(connection: connection, encoding: upgrade.encoding, upgrade: upgrade, phase: .pending)
        if link.open {
            member.phase = .joining
            actions += [.send(id, .join(number, upgrade)), .relaying(connection, id, number)]
        }
        link.members[number] = member
        links[id] = link
        byConnection[connection] = (id, number)
        return actions
    }

    /// The link is open: every member waiting on it joins, in the order they came.
    mutating func opened(_ id: LinkID) -> [Action] {
        guard var link = links[id], !link.open else { return [] }
        link.open = true
        var actions: [Action] = []
        for number in link.members.keys.sorted() {
            guard var member = link.members[number], member.phase == .pending else { continue }
            member.phase = .joining
            link.members[number] = member
            actions += [.send(id, .join(number, member.upgrade)), .relaying(member.connection, id, number)]
        }
        links[id] = link
        return actions
    }

    /// A message from the owner. Nil: it made no sense, and the link is to be closed.
    mutating func received(_ down: RelayDown, on id: LinkID) -> [Action]? {
        guard var link = links[id] else { return [] }
        switch down {
        case .joined(let number):
            // A member gone meanwhile: its `gone` is on its way up.
            guard var member = link.members[number] else { return [] }
            guard member.phase == .joining else { return nil }
            member.phase = .joined
            link.members[number] = member
            links[id] = link
            return []
        case .frame(.member(let number), let payload):
            guard let member = link.members[number] else { return [] }
            guard member.phase == .joined else { return nil }
            return [.deliver(payload, to: [member.connection])]
        case .frame(.everyoneState(let encoding, let except), let payload):
            link.latestState[encoding] = payload
            links[id] = link
            return received(.frame(.everyone(encoding, except: except), payload), on: id)
        case .frame(.everyone(let encoding, let except), let payload):
            let recipients = link.members.compactMap { number, member in
                member.phase == .joined && member.encoding == encoding && number != except ? member.connection : nil
            }
            return recipients.isEmpty ? [] : [.deliver(payload, to: recipients)]
        case .pong:
            return []
        case .close(let number, let code, let reason):
            guard let member = link.members.removeValue(forKey: number) else { return [] }
            byConnection[member.connection] = nil
            links[id] = link
            return [.closeMember(member.connection, code: code, reason: reason)] + closeIfEmpty(id)
        }
    }

    /// The member's own connection ended (or began to close): the owner is told,
    /// and a link that carries nobody any more is closed.
    mutating func gone(_ connection: ConnectionID, leaving: Bool) -> [Action] {
        guard let (id, number) = byConnection.removeValue(forKey: connection), var link = links[id],
              let member = link.members.removeValue(forKey: number) else { return [] }
        links[id] = link
        let told: [Action] = member.phase == .pending ? [] : [.send(id, .gone(number, leaving: leaving))]
        return told + closeIfEmpty(id)
    }

    /// The room's latest state in the member's encoding, for a member that fell
    /// behind (nil before the link has brought one).
    func latestState(for connection: ConnectionID) -> [UInt8]? {
        guard let (id, number) = byConnection[connection], let link = links[id],
              let member = link.members[number], member.phase == .joined else { return nil }
        return link.latestState[member.encoding]
    }

    /// A member that fell behind before the link brought a state: the owner is
    /// asked for one.
    func askForState(_ connection: ConnectionID) -> [Action] {
        guard let (id, number) = byConnection[connection], links[id]?.members[number]?.phase == .joined else { return [] }
        return [.send(id, .resynchronize(number))]
    }

    /// The member's round trip to this node, for the owner's coordinated starts.
    func roundTrip(_ connection: ConnectionID, milliseconds: Int) -> [Action] {
        guard let (id, number) = byConnection[connection], links[id]?.members[number]?.phase == .joined else { return [] }
        return [.send(id, .roundTrip(number, milliseconds: milliseconds))]
    }

    /// The link ended. Members it never carried wait to be placed again (the
    /// owner may have just died); the others are closed with its code when that
    /// code says why to them, else told to reconnect now (`movedCode`).
    mutating func closed(_ id: LinkID, code: UInt16?, reason: String, movedCode: (UInt16) -> Bool) -> [Action] {
        guard let link = links.removeValue(forKey: id) else { return [] }
        if byOwner[Self.key(link.room, link.url)] == id { byOwner[Self.key(link.room, link.url)] = nil }
        var actions: [Action] = []
        for number in link.members.keys.sorted() {
            guard let member = link.members[number] else { continue }
            byConnection[member.connection] = nil
            if !link.open {
                actions.append(.placeAgain(member.connection))
            } else if let code, !movedCode(code) {
                actions.append(.closeMember(member.connection, code: code, reason: reason))
            } else {
                actions.append(.closeMember(member.connection, code: 4010, reason: "the room moved to another node; reconnect now"))
            }
        }
        return actions
    }

    private mutating func closeIfEmpty(_ id: LinkID) -> [Action] {
        guard let link = links[id], link.members.isEmpty else { return [] }
        links[id] = nil
        if byOwner[Self.key(link.room, link.url)] == id { byOwner[Self.key(link.room, link.url)] = nil }
        return [.close(id)]
    }
}
