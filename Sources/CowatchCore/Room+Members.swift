import SlashCommands

/// What a connection asks for when it opens (the WebSocket URL's query).
public struct ConnectRequest: Hashable, Sendable {
    /// The requested display name; invalid or missing names become `guest`.
    public var name: String?
    public var player: Bool
    /// False when the URL said `join=0`.
    public var join: Bool
    /// A token from an earlier `welcome`, to take that identity back.
    public var resume: String?
    /// A fresh unguessable token the gateway made, used when this is a new member.
    public var newToken: String

    public init(name: String? = nil, player: Bool = false, join: Bool = true, resume: String? = nil, newToken: String) {
        self.name = name
        self.player = player
        self.join = join
        self.resume = resume
        self.newToken = newToken
    }
}

public enum ConnectOutcome: Hashable, Sendable {
    case accepted(MemberID, [RoomAction])
    case refused(CommandError)
}

extension Room {
    /// A connection opened. A valid `resume` token restores that member (the room
    /// sees a participant change, not a new member); otherwise a member arrives.
    public mutating func connectionOpened(_ request: ConnectRequest, now: ServerInstant) -> ConnectOutcome {
        if let token = request.resume, let id = tokenIndex[token], members[id] != nil {
            return .accepted(id, collect(now: now) { $0.reconnect(id, request: request, now: now) })
        }
        guard members.count < configuration.maximumMembers else {
            return .refused(CommandError(.roomFull, command: nil,
                                         message: "room \(name) is full (\(configuration.maximumMembers) members)"))
        }
        let id = MemberID("m\(nextMemberNumber)")
        nextMemberNumber += 1
        return .accepted(id, collect(now: now) { $0.arrive(id, request: request, now: now) })
    }

    /// The member's connection closed. Its identity is kept for the resume grace
    /// period; meanwhile it counts for nothing in coordination.
    public mutating func connectionClosed(_ id: MemberID, now: ServerInstant) -> [RoomAction] {
        collect(now: now) { room in
            guard let member = room.members[id], member.connected else { return }
            let serial = member.disconnectSerial + 1
            room.modify(id) {
                $0.connected = false
                $0.disconnectSerial = serial
            }
            room.announce(id, .disconnected)
            room.actions.append(.schedule(.resumeExpires(id, serial: serial),
                                          at: now.advanced(by: room.configuration.resumeGrace)))
            room.coordinationLost(now: now)
        }
    }

    /// The gateway measured this member's round trip; the lead of the next
    /// coordinated start covers the slowest of them. Returns actions like every
    /// entry point, for the gateway to run (none today: a round trip is not stored).
    public mutating func roundTripMeasured(_ roundTrip: ServerInterval, for id: MemberID,
                                           now: ServerInstant) -> [RoomAction] {
        collect(now: now) { $0.modify(id) { $0.roundTrip = roundTrip } }
    }

    mutating func arrive(_ id: MemberID, request: ConnectRequest, now: ServerInstant) {
        let name = uniqueName(request.name.flatMap { DisplayName($0) } ?? .guest, for: id)
        let member = Member(
            id: id, name: name, role: hostCount == 0 ? .host : .member,
            joined: request.join && (state.session?.isActive ?? false), joinsNewSessions: request.join,
            player: request.player, autoplay: false, suspensions: [], readySeq: -1, connected: true,
            arrival: nextMemberNumber, resumeToken: request.newToken, joinedSeq: state.seq, roundTrip: .zero,
            disconnectSerial: 0, catchupSerial: 0)
        insertMember(member)
        welcome(id, now: now)
        actions.append(.broadcast(.participant(participant(member), change: .arrived), except: id))
    }

    mutating func reconnect(_ id: MemberID, request: ConnectRequest, now: ServerInstant) {
        guard let member = members[id] else { return }
        if !member.connected {
            actions.append(.cancel(.resumeExpires(id, serial: member.disconnectSerial)))
        }
        modify(id) {
            $0.connected = true
            // `player=1` on the new URL turns the flag on; without it the member
            // keeps the flag it had, as resuming restores it.
            $0.player = request.player || $0.player
        }
        welcome(id, now: now)
        actions.append(.broadcast(.participant(participant(members[id] ?? member), change: .reconnected), except: id))
    }

    mutating func welcome(_ id: MemberID, now: ServerInstant) {
        guard let member = members[id] else { return }
        let welcome = Welcome(you: participant(member), room: name, serverTime: now,
                              resume: member.resumeToken, participants: participants, chat: recentChat)
        actions.append(.send(.welcome(welcome), to: id))
        handState(to: id)
    }

    /// A disconnected member's grace period ended without a reconnect.
    mutating func resumeExpired(_ id: MemberID, serial: Int64, now: ServerInstant) {
        guard let member = members[id], !member.connected, member.disconnectSerial == serial else { return }
        remove(id, reason: .left, now: now)
    }

    /// A member leaves the room for good: after the grace period, or on `/kick`.
    mutating func remove(_ id: MemberID, reason: DepartureReason, now: ServerInstant) {
        guard let member = deleteMember(id) else { return }
        actions.append(.broadcast(.participantLeft(id, name: member.name, reason: reason)))
        if member.role == .host && hostCount == 0 { promoteLongestPresent() }
        coordinationLost(now: now)
    }

    /// When the last host is gone, the longest-present member (connected ones
    /// first) becomes host, so a room is never left without moderation.
    mutating func promoteLongestPresent() {
        let candidates = members.values
        let successor = candidates.filter(\.connected).min { $0.arrival < $1.arrival }
            ?? candidates.min { $0.arrival < $1.arrival }
        guard let successor else { return }
        modify(successor.id) { $0.role = .host }
        announce(successor.id, .role)
        notify("\(successor.name) is now a host", cause: .host, by: nil)
    }

    /// `name` if nobody else has it (ignoring case), else `name-2`, `name-3`...
    /// shortened to stay within the length limit.
    func uniqueName(_ name: DisplayName, for id: MemberID) -> DisplayName {
        func isFree(_ text: String) -> Bool {
            let holder = nameIndex[text.lowercased()]
            return holder == nil || holder == id
        }
        if isFree(name.text) { return name }
        // Among this many suffixes at least one is free.
        for suffixNumber in 2...(nameIndex.count + 2) {
            let suffix = "-\(suffixNumber)"
            var base = String(name.text.prefix(DisplayName.maximumCharacters - suffix.count))
            while !base.isEmpty && base.utf8.count + suffix.utf8.count > DisplayName.maximumBytes { base.removeLast() }
            if let candidate = DisplayName(base + suffix), isFree(candidate.text) { return candidate }
        }
        return DisplayName(id.rawValue) ?? .guest
    }

    func member(named text: String) -> Member? {
        nameIndex[text.lowercased()].flatMap { members[$0] }
    }

    // MARK: - Commands

    mutating func nick(_ requested: DisplayName, from id: MemberID) {
        guard let member = members[id] else { return }
        let name = uniqueName(requested, for: id)
        guard name != member.name else {
            tell(id, "you are already called \(name)")
            return
        }
        modify(id) { $0.name = name }
        announce(id, .renamed(from: member.name))
    }

    mutating func op(_ target: String, from id: MemberID) {
        guard requireHost(id, .op), let other = requireMember(named: target, from: id, .op) else { return }
        guard other.role != .host else {
            tell(id, "\(other.name) is already a host")
            return
        }
        modify(other.id) { $0.role = .host }
        announce(other.id, .role)
        notify("\(displayName(id)) made \(other.name) a host", cause: .op, by: id)
    }

    mutating func deop(_ target: String, from id: MemberID) {
        guard requireHost(id, .deop), let other = requireMember(named: target, from: id, .deop) else { return }
        guard other.role == .host else {
            tell(id, "\(other.name) is not a host")
            return
        }
        guard hostCount > 1 else {
            refuse(id, .lastHost, .deop, "\(other.name) is the last host; /op someone else first")
            return
        }
        modify(other.id) { $0.role = .member }
        announce(other.id, .role)
        notify("\(displayName(id)) took host rights from \(other.name)", cause: .deop, by: id)
    }

    mutating func kick(_ target: String, from id: MemberID, now: ServerInstant) {
        guard requireHost(id, .kick), let other = requireMember(named: target, from: id, .kick) else { return }
        guard other.id != id else {
            refuse(id, .badArguments, .kick, "/kick: you cannot kick yourself; close the connection to leave")
            return
        }
        let kicker = displayName(id)
        remove(other.id, reason: .kicked, now: now)
        actions.append(.closeConnection(other.id, reason: "kicked by \(kicker)"))
        notify("\(other.name) was kicked by \(kicker)", cause: .kick, by: id)
    }

    mutating func requireMember(named target: String, from id: MemberID, _ command: CommandName) -> Member? {
        guard let other = member(named: target) else {
            refuse(id, .noSuchMember, command, "/\(command.rawValue): nobody here is called \(target.prefix(40))")
            return nil
        }
        return other
    }
}
