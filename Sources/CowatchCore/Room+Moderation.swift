import CowatchTime
import SlashCommands

/// Ownership and moderation that sticks (docs/security.md): the owner key, bans
/// and kick cooldowns checked when a connection opens, mutes, slow mode, and how
/// long an empty room is kept.
extension Room {
    // MARK: - Who may come in

    /// Whether the connection presents the room's owner key.
    func presentsOwnerKey(_ request: ConnectRequest) -> Bool {
        guard let key = request.ownerKey, let digest = protection.ownerKeyDigest else { return false }
        return SecretDigest.equal(SecretDigest.hex(key), digest)
    }

    /// The ban or kick cooldown that keeps this connection out, if any. Members
    /// present come back with their resume token before this is asked.
    func banRefusal(_ request: ConnectRequest, now: ServerInstant) -> CommandError? {
        // Most rooms ban nobody: no digests to compute for them.
        guard !protection.bans.isEmpty else { return nil }
        let name = request.name.flatMap { DisplayName($0) }
        var identities: [String] = []
        if let token = request.resume { identities.append(SecretDigest.hex(token)) }
        if let device = request.device { identities.append(SecretDigest.hex(device)) }
        let address = configuration.addressBans ? request.address : nil
        guard let ban = protection.bans.first(where: {
            $0.keepsOut(name: name, identities: identities, address: address, now: now)
        }) else { return nil }
        return CommandError(.banned, command: nil, message: Self.sentence(for: ban, now: now))
    }

    /// "you were kicked by alice (spam); you may come back in 9 min 40 s"
    static func sentence(for ban: Ban, now: ServerInstant) -> String {
        let why = ban.reason.map { " (\($0))" } ?? ""
        let verb = ban.kind == .kick ? "you were kicked from this room by \(ban.by)" : "you are banned from this room by \(ban.by)"
        guard let until = ban.until else { return verb + why + " until a host lifts the ban" }
        return verb + why + "; you may come back in " + duration(until.interval(since: now))
    }

    /// "9 min 40 s", "2 h 5 min", "3 d 4 h": two units at most, rounded up.
    static func duration(_ interval: ServerInterval) -> String {
        let seconds = Swift.max(1, (interval.milliseconds + 999) / 1000)
        let units: [(Int64, String)] = [(86_400, "d"), (3600, "h"), (60, "min"), (1, "s")]
        var parts: [String] = []
        var rest = seconds
        for (size, name) in units where rest >= size && parts.count < 2 {
            parts.append("\(rest / size) \(name)")
            rest %= size
        }
        return parts.joined(separator: " ")
    }

    // MARK: - Commands

    mutating func kick(_ target: String, reason: String?, from id: MemberID, now: ServerInstant) {
        guard requireHost(id, .kick), let other = requireMember(named: target, from: id, .kick),
              requireRemovable(other, by: id, .kick) else { return }
        let kicker = displayName(id)
        let ban = keepOut(other, kind: .kick, until: now.advanced(by: configuration.kickCooldown), reason: reason,
                          by: id, now: now)
        remove(other.id, reason: .kicked, now: now)
        actions.append(.closeConnection(other.id, reason: Self.sentence(for: ban, now: now)))
        notify("\(other.name) was kicked by \(kicker)" + (reason.map { " (\($0))" } ?? ""), cause: .kick, by: id)
    }

    mutating func ban(_ target: String, minutes: Double?, reason: String?, from id: MemberID, now: ServerInstant) {
        guard requireHost(id, .ban) else { return }
        let until = minutes.map { now.advanced(by: ServerInterval(seconds: $0 * 60)) }
        let banner = displayName(id)
        let what = until.map { " for " + Self.duration($0.interval(since: now)) } ?? ""
        let why = reason.map { " (\($0))" } ?? ""
        guard let other = member(named: target) else {
            // Someone gone for good can still be kept out by name.
            guard let name = DisplayName(target) else {
                refuse(id, .noSuchMember, .ban, "/ban: nobody here is called \(target.prefix(40))")
                return
            }
            addBan(Ban(number: 0, kind: .ban, name: name, identities: [], address: nil, until: until, reason: reason,
                       by: members[id]?.name ?? .guest, at: now))
            tell(id, "nobody here is called \(name); the name \(name) is banned\(what)")
            return
        }
        guard requireRemovable(other, by: id, .ban) else { return }
        let ban = keepOut(other, kind: .ban, until: until, reason: reason, by: id, now: now)
        remove(other.id, reason: .banned, now: now)
        actions.append(.closeConnection(other.id, reason: Self.sentence(for: ban, now: now)))
        notify("\(other.name) was banned by \(banner)\(what)\(why)", cause: .ban, by: id)
    }

    mutating func unban(_ target: String, from id: MemberID, now: ServerInstant) {
        guard requireHost(id, .unban) else { return }
        let number = Int64(target.hasPrefix("#") ? String(target.dropFirst()) : target)
        let lifted = protection.bans.filter { ban in
            ban.number == number || ban.name.text.lowercased() == target.lowercased()
        }
        guard !lifted.isEmpty else {
            refuse(id, .notPossible, .unban, "/unban: no ban or kick keeps out \(target.prefix(40)); /bans lists them")
            return
        }
        protection.bans.removeAll { lifted.contains($0) }
        needsPersisting = true
        let names = Set(lifted.map(\.name.text)).sorted().joined(separator: ", ")
        notify("\(displayName(id)) let \(names) back in", cause: .ban, by: id)
    }

    mutating func listBans(for id: MemberID, now: ServerInstant) {
        guard requireHost(id, .bans) else { return }
        dropExpiredBans(now: now)
        actions.append(.send(.reply(.bans(protection.bans, now: now)), to: id))
    }

    mutating func mute(_ target: String, on: Bool, from id: MemberID) {
        let command: CommandName = on ? .mute : .unmute
        guard requireHost(id, command), let other = requireMember(named: target, from: id, command) else { return }
        if on { guard requireRemovable(other, by: id, command) else { return } }
        guard other.muted != on else {
            tell(id, "\(other.name) is \(on ? "already" : "not") muted")
            return
        }
        modify(other.id) { $0.muted = on }
        announce(other.id, on ? .muted : .unmuted)
        voiceMuteFollows(other.id)
        notify("\(displayName(id)) \(on ? "muted" : "unmuted") \(other.name)", cause: .mute, by: id)
    }

    mutating func slow(_ seconds: Double?, from id: MemberID) {
        guard requireHost(id, .slow) else { return }
        let interval = seconds.map { ServerInterval(seconds: $0) }
        guard interval != protection.slowMode else {
            tell(id, seconds == nil ? "slow mode is already off" : "slow mode is already so")
            return
        }
        protection.slowMode = interval
        needsPersisting = true
        let text = seconds.map { "one chat line every \(NumberText.decimal($0, places: 1)) s for each member but hosts" }
        notify("\(displayName(id)) " + (text.map { "turned on slow mode: \($0)" } ?? "turned off slow mode"),
               cause: .slow, by: id)
    }

    // MARK: - Refusals

    /// Nobody removes or mutes the owner but another holder of the owner key.
    mutating func requireRemovable(_ other: Member, by id: MemberID, _ command: CommandName) -> Bool {
        guard other.id != id else {
            refuse(id, .badArguments, command, "/\(command.rawValue): not yourself")
            return false
        }
        guard other.owner, members[id]?.owner != true else { return true }
        refuse(id, .forbidden, command, "/\(command.rawValue): \(other.name) holds the room's owner key")
        return false
    }

    /// A muted member may still ask and report; everything else is refused.
    mutating func allowedWhileMuted(_ line: InputLine, from id: MemberID) -> Bool {
        guard members[id]?.muted == true else { return true }
        switch line {
        case .empty, .command(.help), .command(.who), .command(.status), .command(.time), .command(.ready),
             .command(.buffering), .command(.ended), .command(.duration), .command(.have), .command(.player), .command(.queue(nil, _)),
             .command(.voice(.list)), .command(.voice(.leave)), .command(.voice(.mute(true))):
            return true
        case .chat, .command:
            let command: CommandName? = if case .command(let command) = line { command.name } else { nil }
            refuse(id, .muted, command, "you are muted by a host: your chat and commands are off; your player still follows the group")
            return false
        }
    }

    /// Slow mode: a member without host rights chats at most once per interval.
    mutating func allowedBySlowMode(_ id: MemberID, now: ServerInstant) -> Bool {
        guard let interval = protection.slowMode, let member = members[id], member.role != .host else { return true }
        if let last = member.lastChat, now < last.advanced(by: interval) {
            let wait = Self.duration(last.advanced(by: interval).interval(since: now))
            refuse(id, .slowMode, nil, "slow mode: one chat line every \(Self.duration(interval)); wait \(wait)")
            return false
        }
        modify(id) { $0.lastChat = now }
        return true
    }

    // MARK: - Keeping out

    /// Records a ban or kick of a member present, by its identities, name and address.
    mutating func keepOut(_ member: Member, kind: Ban.Kind, until: ServerInstant?, reason: String?,
                          by id: MemberID, now: ServerInstant) -> Ban {
        var identities = [SecretDigest.hex(member.resumeToken)]
        if let device = member.deviceDigest { identities.append(device) }
        var address = configuration.addressBans ? member.address : nil
        // An address is one person's only while nobody else in the room uses it: a
        // household, a school or a proxy that forwards no client address would be
        // shut out whole. The host is told what the ban keeps out instead.
        if let shared = address {
            let others = members.values.filter { $0.id != member.id && $0.address == shared }.count
            if others > 0 {
                address = nil
                tell(id, "\(member.name)'s address is also \(others == 1 ? "1 other member's" : "\(others) other members'") here "
                     + "(a household, a school or a proxy), so the \(kind == .ban ? "ban" : "kick") keeps out "
                     + "\(member.name)'s identity and name, not the address")
            }
        }
        let ban = Ban(number: 0, kind: kind, name: member.name, identities: identities,
                      address: address, until: until, reason: reason,
                      by: members[id]?.name ?? .guest, at: now)
        return addBan(ban)
    }

    @discardableResult
    mutating func addBan(_ ban: Ban) -> Ban {
        var numbered = ban
        numbered.number = protection.nextBanNumber
        protection.nextBanNumber += 1
        dropExpiredBans(now: ban.at)
        protection.bans.append(numbered)
        if protection.bans.count > configuration.maximumBans { protection.bans.removeFirst() }
        needsPersisting = true
        return numbered
    }

    mutating func dropExpiredBans(now: ServerInstant) {
        let before = protection.bans.count
        protection.bans.removeAll { ban in ban.until.map { now >= $0 } ?? false }
        if protection.bans.count != before { needsPersisting = true }
    }

    // MARK: - An empty room

    /// The last member was forgotten: the room is kept, with its owner, policy and
    /// bans, for the room expiry, then forgotten unless someone came.
    mutating func becameEmpty(now: ServerInstant) {
        guard members.isEmpty else { return }
        protection.emptySince = now
        needsPersisting = true
        actions.append(.schedule(.roomExpires(emptySince: now), at: now.advanced(by: expiry)))
    }

    /// How long this room is kept once empty.
    var expiry: ServerInterval { hasBeenUsed ? configuration.roomExpiry : configuration.unusedRoomExpiry }

    /// Whether anyone ever did anything in the room: shared or changed what plays,
    /// changed its policy, chatted, or protected it. A room only opened and left
    /// is kept for less (`unusedRoomExpiry`) and is the first given up when the
    /// server is full.
    public var hasBeenUsed: Bool {
        state.seq > 0 || !recentChat.isEmpty || !protection.bans.isEmpty || protection.password != nil
            || !protection.invites.isEmpty || !protection.tokens.isEmpty || protection.slowMode != nil
    }

    /// Since when the room is empty; nil while anyone is in it.
    public var emptySince: ServerInstant? { protection.emptySince }

    /// Someone came into an empty room: it no longer expires.
    mutating func visited() {
        guard let since = protection.emptySince else { return }
        actions.append(.cancel(.roomExpires(emptySince: since)))
        protection.emptySince = nil
        needsPersisting = true
    }

    mutating func expiryReached(emptySince: ServerInstant) {
        guard members.isEmpty, protection.emptySince == emptySince else { return }
        actions.append(.forgetRoom)
    }
}
