import CowatchTime
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
    /// The room's owner key, presented (`owner=`).
    public var ownerKey: String?
    /// A fresh unguessable key the gateway made, that becomes the room's owner key
    /// when this connection creates the room; nil: the room gets no owner.
    public var newOwnerKey: String?
    /// An identity the client keeps across names and sessions (`device=`), for bans.
    public var device: String?
    /// An invite link's token (`invite=`): lets a newcomer into a locked or
    /// password-protected room.
    public var invite: String?
    /// The room password (`password=`).
    public var password: String?
    /// A bot's token (`token=` or `Authorization: Bearer`).
    public var token: String?
    /// The client's address, for bans.
    public var address: String?
    /// The program it watches with (`software=`), as `Participant.softwareName` takes it.
    public var software: String?

    public init(name: String? = nil, player: Bool = false, join: Bool = true, resume: String? = nil, newToken: String,
                ownerKey: String? = nil, newOwnerKey: String? = nil, device: String? = nil, address: String? = nil,
                invite: String? = nil, password: String? = nil, token: String? = nil, software: String? = nil) {
        self.name = name
        self.player = player
        self.join = join
        self.resume = resume
        self.newToken = newToken
        self.ownerKey = ownerKey
        self.newOwnerKey = newOwnerKey
        self.device = device
        self.address = address
        self.invite = invite
        self.password = password
        self.token = token
        self.software = Participant.softwareName(software)
    }
}

public enum ConnectOutcome: Hashable, Sendable {
    case accepted(MemberID, [RoomAction])
    case refused(CommandError)
}

extension Room {
    /// A connection opened. A valid `resume` token restores that member (the room
    /// sees a participant change, not a new member); otherwise a member arrives,
    /// unless a ban or a kick's cooldown keeps it out. The owner key makes its
    /// holder the owner and lets it past bans.
    public mutating func connectionOpened(_ request: ConnectRequest, now: ServerInstant) -> ConnectOutcome {
        let owner = presentsOwnerKey(request)
        if let token = request.resume, let id = tokenIndex[token], members[id] != nil {
            return .accepted(id, collect(now: now) { $0.reconnect(id, request: request, owner: owner, now: now) })
        }
        if request.token != nil, !owner, let refusal = tooManyFailures(from: request.address, now: now) {
            return .refused(refusal)
        }
        let bot = owner ? nil : validToken(request.token)
        if request.token != nil, bot == nil, !owner {
            recordFailure(from: request.address, now: now)
            return .refused(CommandError(.badToken, command: nil, message: "this token is not (or no longer) valid for this room"))
        }
        var request = request
        if let bot { request.name = bot.name.text }
        if !owner, let refusal = banRefusal(request, now: now) { return .refused(refusal) }
        let invite = owner || bot != nil ? nil : validInvite(request.invite, now: now)
        // A right password may re-make an outdated digest: saved with the arrival.
        let passwordBefore = protection.password
        if !owner, bot == nil, invite == nil, let refusal = accessRefusal(request, now: now) { return .refused(refusal) }
        // A room is full of the people in it: members waiting out their resume grace
        // do not count, so connections that drop at once cannot fill it; its owner
        // is never kept out of it.
        guard owner || connectedCount < configuration.maximumMembers else {
            return .refused(CommandError(.roomFull, command: nil,
                                         message: "room \(name) is full (\(configuration.maximumMembers) members)"))
        }
        let id = MemberID("m\(nextMemberNumber)")
        nextMemberNumber += 1
        return .accepted(id, collect(now: now) { room in
            if room.protection.password != passwordBefore { room.needsPersisting = true }
            if let invite { room.useInvite(invite) }
            room.makeRoomForArrival(now: now)
            room.arrive(id, request: request, owner: owner, bot: bot, now: now)
        })
    }

    /// Those waiting out a resume grace are kept for at most as many again as the
    /// room holds: past that, the one that has waited longest (a member before a
    /// host) is let go, so that a room's memory stays bounded however many
    /// connections come and drop.
    mutating func makeRoomForArrival(now: ServerInstant) {
        guard members.count >= 2 * configuration.maximumMembers else { return }
        let away = members.values.filter { !$0.connected }
        let oldest = away.filter { $0.role != .host }.min { $0.arrival < $1.arrival } ?? away.min { $0.arrival < $1.arrival }
        if let oldest { remove(oldest.id, reason: .left, now: now) }
    }

    /// The member's connection closed. Its identity is kept for the resume grace
    /// period; meanwhile it counts for nothing in coordination. A member `leaving`
    /// (its client closed with 1000, docs/protocol.md) is gone at once instead:
    /// nobody waits out a grace for someone who said goodbye.
    public mutating func connectionClosed(_ id: MemberID, leaving: Bool = false, now: ServerInstant) -> [RoomAction] {
        collect(now: now) { room in
            guard let member = room.members[id], member.connected else { return }
            if leaving {
                room.remove(id, reason: .left, now: now)
                return
            }
            let serial = member.disconnectSerial + 1
            room.leaveVoiceOnDeparture(id)
            room.modify(id) {
                $0.connected = false
                $0.disconnectSerial = serial
            }
            room.announce(id, .disconnected)
            room.actions.append(.schedule(.resumeExpires(id, serial: serial),
                                          at: now.advanced(by: room.configuration.grace(for: member))))
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

    mutating func arrive(_ id: MemberID, request: ConnectRequest, owner presentsKey: Bool, bot: BotToken? = nil,
                         now: ServerInstant) {
        let asked = request.name.flatMap { DisplayName($0) }
        let name = uniqueName(asked ?? .guest, for: id)
        // The first member of a room without an owner founds it and gets the key.
        var ownerKey: String?
        if members.isEmpty, protection.ownerKeyDigest == nil, let key = request.newOwnerKey {
            protection.ownerKeyDigest = SecretDigest.hex(key)
            ownerKey = key
            // The key is told to its founder once: a restart, or a cluster node's
            // death, must not bring the room back without it.
            needsPersisting = true
        }
        let owner = presentsKey || ownerKey != nil
        // A room with an owner waits for it (or its hosts) rather than handing host
        // rights to whoever comes into it.
        let host = owner || (hostCount == 0 && protection.ownerKeyDigest == nil)
        visited()
        var member = Member(
            id: id, name: name, role: host ? .host : .member,
            joined: request.join && (state.session?.isActive ?? false), joinsNewSessions: request.join,
            player: request.player, autoplay: false, suspensions: [], readySeq: -1, connected: true,
            arrival: nextMemberNumber, resumeToken: request.newToken, joinedSeq: state.seq, roundTrip: .zero,
            disconnectSerial: 0, catchupSerial: 0)
        member.owner = owner
        member.scope = bot?.scope
        member.tokenNumber = bot?.number
        member.deviceDigest = request.device.map(SecretDigest.hex)
        member.address = request.address
        member.software = request.software
        insertMember(member)
        welcome(id, ownerKey: ownerKey, now: now)
        // Said to the newcomer alone, so that a refused or taken name is not a mystery.
        if let text = request.name, bot == nil {
            if let problem = asked == nil ? DisplayName.validationProblem(text) : nil {
                refuse(id, .badName, nil, "your name was not taken: \(problem). You are \(name) here; /nick <name> changes it")
            } else if let asked, asked != name {
                tell(id, "\(asked) is taken here; you are \(name): /nick <name> changes it")
            }
        }
        actions.append(.broadcast(.participant(participant(member), change: .arrived), except: id))
    }

    mutating func reconnect(_ id: MemberID, request: ConnectRequest, owner: Bool, now: ServerInstant) {
        guard let member = members[id] else { return }
        if !member.connected {
            actions.append(.cancel(.resumeExpires(id, serial: member.disconnectSerial)))
        }
        modify(id) {
            $0.connected = true
            // `player=1` on the new URL turns the flag on; without it the member
            // keeps the flag it had, as resuming restores it.
            $0.player = request.player || $0.player
            if let device = request.device { $0.deviceDigest = SecretDigest.hex(device) }
            if let address = request.address { $0.address = address }
            if let software = request.software { $0.software = software }
            if owner {
                $0.owner = true
                $0.role = .host
            }
        }
        welcome(id, now: now)
        actions.append(.broadcast(.participant(participant(members[id] ?? member), change: .reconnected), except: id))
    }

    mutating func welcome(_ id: MemberID, ownerKey: String? = nil, now: ServerInstant) {
        guard let member = members[id] else { return }
        let welcome = Welcome(you: participant(member), room: name, serverTime: now,
                              resume: member.resumeToken, ownerKey: ownerKey, participants: participants, chat: recentChat,
                              limits: configuration.announcedLimits)
        actions.append(.send(.welcome(welcome), to: id))
        handState(to: id)
        greetWithVoice(id)
    }

    /// A disconnected member's grace period ended without a reconnect.
    mutating func resumeExpired(_ id: MemberID, serial: Int64, now: ServerInstant) {
        guard let member = members[id], !member.connected, member.disconnectSerial == serial else { return }
        remove(id, reason: .left, now: now)
    }

    /// A member leaves the room for good: after the grace period, or on `/kick`.
    mutating func remove(_ id: MemberID, reason: DepartureReason, now: ServerInstant) {
        leaveVoiceOnDeparture(id)
        guard let member = deleteMember(id) else { return }
        actions.append(.broadcast(.participantLeft(id, name: member.name, reason: reason)))
        if member.role == .host && hostCount == 0 { promoteLongestPresent() }
        coordinationLost(now: now)
        becameEmpty(now: now)
    }

    /// When the last host is gone, the longest-present member (connected ones
    /// first) becomes host, so a room is never left without moderation; unless
    /// the room has an owner, whose key brings host rights back.
    mutating func promoteLongestPresent() {
        guard protection.ownerKeyDigest == nil else { return }
        let candidates = members.values
        let successor = candidates.filter(\.connected).min { $0.arrival < $1.arrival }
            ?? candidates.min { $0.arrival < $1.arrival }
        guard let successor else { return }
        modify(successor.id) { $0.role = .host }
        announce(successor.id, .role)
        notify("\(successor.name) is now a host", cause: .host, by: nil)
    }

    /// `name` if nobody else has it or a name that can be mistaken for it (the
    /// same ignoring case, or with the same UTS #39 skeleton: "AIice" for "Alice"),
    /// else `name-2`, `name-3`... shortened to stay within the length limit.
    func uniqueName(_ name: DisplayName, for id: MemberID) -> DisplayName {
        func isFree(_ name: DisplayName) -> Bool {
            let holders = [nameIndex[Self.nameKey(name)]] + name.lookalikeKeys.map { lookalikeIndex[$0] }
            return holders.allSatisfy { $0 == nil || $0 == id }
        }
        if isFree(name) { return name }
        // Among this many suffixes at least one is free.
        for suffixNumber in 2...(nameIndex.count + 2) {
            let suffix = "-\(suffixNumber)"
            var base = String(name.text.prefix(DisplayName.maximumCharacters - suffix.count))
            while !base.isEmpty && base.utf8.count + suffix.utf8.count > DisplayName.maximumBytes { base.removeLast() }
            if let candidate = DisplayName(base + suffix), isFree(candidate) { return candidate }
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
        guard !other.owner else {
            refuse(id, .forbidden, .deop, "/deop: \(other.name) holds the room's owner key and stays a host")
            return
        }
        guard hostCount > 1 else {
            refuse(id, .lastHost, .deop, "\(other.name) is the last host; /op someone else first")
            return
        }
        modify(other.id) { $0.role = .member }
        announce(other.id, .role)
        notify("\(displayName(id)) took host rights from \(other.name)", cause: .deop, by: id)
        voiceRoleFollows(other.id)
    }

    mutating func requireMember(named target: String, from id: MemberID, _ command: CommandName) -> Member? {
        guard let other = member(named: target) else {
            refuse(id, .noSuchMember, command, "/\(command.rawValue): nobody here is called \(target.prefix(40))")
            return nil
        }
        return other
    }
}
