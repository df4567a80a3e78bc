import CowatchTime
import SlashCommands

/// Who may come into a room besides its members: `/lock`, `/password` and invite
/// links (docs/security.md). Checked for a newcomer after bans; the owner key and
/// a current member's resume token pass them all.
extension Room {
    // MARK: - At the door

    /// The invite in force that this token opens, if any.
    func validInvite(_ token: String?, now: ServerInstant) -> Int64? {
        guard let token, !protection.invites.isEmpty else { return nil }
        let digest = SecretDigest.hex(token)
        return protection.invites.first { invite in
            SecretDigest.equal(invite.tokenDigest, digest) && now < invite.expires && invite.usesLeft > 0
        }?.number
    }

    /// Why a newcomer without an invite may not come in: the room is locked, or
    /// asks a password it did not give (right). Wrong passwords are counted per
    /// address; past the limit the address is refused without a check.
    mutating func accessRefusal(_ request: ConnectRequest, now: ServerInstant) -> CommandError? {
        if state.policy.locked {
            // Someone with a link that no longer opens the room has an invite: they
            // need a new one, not to be told to get one.
            if let invite = request.invite, !invite.isEmpty {
                return CommandError(.locked, command: nil, message: Self.spentInviteWords)
            }
            return CommandError(.locked, command: nil, message: "this room is locked: only an invite link from a host lets you in")
        }
        guard let password = protection.password else { return nil }
        if let refusal = tooManyFailures(from: request.address, now: now) { return refusal }
        guard let given = request.password, !given.isEmpty else {
            return CommandError(.passwordRequired, command: nil, message: "this room asks for a password")
        }
        if password.matches(given) {
            passwordFailures[request.address ?? "unknown"] = nil
            upgradePassword(given, from: password, secret: request.newToken)
            return nil
        }
        recordFailure(from: request.address, now: now)
        return CommandError(.wrongPassword, command: nil, message: "wrong password")
    }

    /// What a locked room says to an invite link that no longer lets anyone in. Spent
    /// and expired invites are forgotten (only those in force are kept), so the
    /// words name every way a link runs out.
    /// Short enough for a close frame's reason (123 bytes), which the page shows.
    static let spentInviteWords = "this invite link no longer lets anyone in (used up, expired or revoked): ask a host for a new one"

    /// A right password re-makes a digest of an older algorithm or other
    /// parameters with the configured ones, so that rooms saved before move to
    /// them one check at a time. The salt is keyed from the connection's fresh
    /// secret, which the gateway drew from the system's random generator.
    mutating func upgradePassword(_ password: String, from digest: PasswordDigest, secret: String) {
        guard digest.isOutdated(for: configuration.passwordHashing),
              let upgraded = PasswordDigest.make(password, salt: Self.passwordSalt(secret: secret, "upgrade"),
                                                 hashing: configuration.passwordHashing)
        else { return }
        protection.password = upgraded
    }

    /// A salt for a password digest: 128 bits keyed (HMAC-SHA256) from a secret
    /// the gateway drew from the system's random generator, unique per `context`.
    static func passwordSalt(secret: String, _ context: String) -> String {
        String(SecretDigest.keyed("password-salt/\(context)", secret: secret).prefix(32))
    }

    /// Wrong passwords and bot tokens, counted per address: past the limit within
    /// the window, the address is refused without a check.
    func tooManyFailures(from address: String?, now: ServerInstant) -> CommandError? {
        let window = configuration.passwordAttemptWindow
        let failures = (passwordFailures[address ?? "unknown"] ?? []).filter { now < $0.advanced(by: window) }
        guard failures.count >= configuration.passwordAttempts, let first = failures.first else { return nil }
        return CommandError(.tooManyAttempts, command: nil,
                            message: "too many wrong passwords or tokens from your address; try again in "
                                + Self.duration(first.advanced(by: window).interval(since: now)))
    }

    mutating func recordFailure(from address: String?, now: ServerInstant) {
        let window = configuration.passwordAttemptWindow
        let key = address ?? "unknown"
        var failures = (passwordFailures[key] ?? []).filter { now < $0.advanced(by: window) }
        failures.append(now)
        // Bounded: addresses whose failures are all old are forgotten first.
        if passwordFailures.count >= Self.maximumFailingAddresses {
            passwordFailures = passwordFailures.filter { $0.value.contains { now < $0.advanced(by: window) } }
            if passwordFailures.count >= Self.maximumFailingAddresses { passwordFailures.removeAll() }
        }
        passwordFailures[key] = failures
    }

    /// Addresses whose wrong passwords a room remembers at once.
    static let maximumFailingAddresses = 10_000

    mutating func useInvite(_ number: Int64) {
        guard let index = protection.invites.firstIndex(where: { $0.number == number }) else { return }
        protection.invites[index].usesLeft -= 1
        if protection.invites[index].usesLeft <= 0 { protection.invites.remove(at: index) }
        needsPersisting = true
    }

    // MARK: - Commands

    mutating func lock(_ on: Bool, from id: MemberID) {
        switchPolicy(\.locked, to: on, command: on ? .lock : .unlock, cause: .lock, from: id,
                     unchanged: on ? "the room is already locked" : "the room is not locked",
                     done: on ? "locked the room: only invite links let anyone new in" : "unlocked the room",
                     tellsListing: true)
    }

    /// `/public on` asks for the room to be listed; a locked room or one with a
    /// password is left off the list while it is so (the landing page must not
    /// show a door that does not open), and the answer says so rather than
    /// claiming a listing nobody sees.
    mutating func list(_ on: Bool, from id: MemberID) {
        guard on, let hold = listingHold else {
            switchPolicy(\.listed, to: on, command: .public, cause: .policy, from: id,
                         unchanged: on ? "the room is already listed" : "the room is not listed",
                         done: on ? "listed the room on the server's front page" : "took the room off the server's front page")
            return
        }
        switchPolicy(\.listed, to: true, command: .public, cause: .policy, from: id,
                     unchanged: "the room is to be listed, but it is not on the server's front page while \(hold)",
                     done: "asked for the room to be listed on the server's front page; it is not listed while \(hold)")
    }

    /// Why a room is kept off the front page whatever its hosts asked, if anything.
    var listingHold: String? {
        switch (state.policy.locked, state.policy.password) {
        case (true, true): "it is locked and has a password"
        case (true, false): "it is locked"
        case (false, true): "it has a password"
        case (false, false): nil
        }
    }

    /// Whether the front page shows the room now (`GET /rooms.json`).
    public var isShownInListing: Bool {
        state.policy.listed && listingHold == nil
    }

    /// The words a lock or password change adds when it takes a listed room off
    /// the front page or puts it back.
    func listingChange(wasShown: Bool) -> String {
        switch (wasShown, isShownInListing) {
        case (true, false): "; the room is off the server's front page while \(listingHold ?? "it is closed")"
        case (false, true): "; the room is listed on the server's front page again"
        default: ""
        }
    }

    /// A host turns one of the room's switches: published with the state (so every
    /// page shows it) and told to everyone in words; with `tellsListing`, the words
    /// also say when the change takes a listed room off the front page or puts it back.
    mutating func switchPolicy(_ flag: WritableKeyPath<RoomPolicy, Bool>, to on: Bool, command: CommandName, cause: Cause,
                               from id: MemberID, unchanged: String, done: String, tellsListing: Bool = false) {
        guard requireHost(id, command) else { return }
        guard state.policy[keyPath: flag] != on else {
            tell(id, unchanged)
            return
        }
        let wasShown = isShownInListing
        state.policy[keyPath: flag] = on
        publish(cause, by: id)
        notify("\(displayName(id)) \(done)" + (tellsListing ? listingChange(wasShown: wasShown) : ""), cause: cause, by: id)
    }

    mutating func setPassword(_ password: String?, from id: MemberID, now: ServerInstant) {
        guard requireHost(id, .password), let member = members[id] else { return }
        guard let password else {
            guard protection.password != nil else {
                tell(id, "the room has no password")
                return
            }
            let wasShown = isShownInListing
            protection.password = nil
            state.policy.password = false
            publish(.password, by: id)
            notify("\(displayName(id)) removed the room's password" + listingChange(wasShown: wasShown), cause: .password, by: id)
            return
        }
        // Unique per room and change, and unguessable: keyed from the setter's
        // secret resume token.
        let salt = Self.passwordSalt(secret: member.resumeToken, "\(now.milliseconds)/\(state.seq)")
        guard let digest = PasswordDigest.make(password, salt: salt, hashing: configuration.passwordHashing) else {
            // Only parameters outside PasswordHashing's bounds get here: the
            // settings refuse them, but a RoomConfiguration is a plain value.
            refuse(id, .notPossible, .password,
                   "/password: this server's password hashing settings (password-hash-*) are not usable; no password was set")
            return
        }
        let wasShown = isShownInListing
        protection.password = digest
        needsPersisting = true
        if !state.policy.password {
            state.policy.password = true
            publish(.password, by: id)
        }
        notify("\(displayName(id)) set a password for the room: newcomers are asked for it" + listingChange(wasShown: wasShown),
               cause: .password, by: id)
    }

    mutating func invite(uses: Int, minutes: Double, from id: MemberID, now: ServerInstant) {
        guard requireHost(id, .invite), let member = members[id] else { return }
        dropExpiredInvites(now: now)
        guard protection.invites.count < configuration.maximumInvites else {
            refuse(id, .notPossible, .invite,
                   "/invite: this room has \(configuration.maximumInvites) invite links in force; /revoke one first")
            return
        }
        let number = protection.nextInviteNumber
        protection.nextInviteNumber += 1
        let token = String(SecretDigest.keyed("invite/\(number)/\(now.milliseconds)", secret: member.resumeToken).prefix(32))
        let invite = Invite(number: number, tokenDigest: SecretDigest.hex(token), usesLeft: uses,
                            expires: now.advanced(by: ServerInterval(seconds: minutes * 60)), by: member.name, at: now)
        protection.invites.append(invite)
        needsPersisting = true
        actions.append(.send(.reply(.invite(invite, token: token, now: now)), to: id))
    }

    mutating func listInvites(for id: MemberID, now: ServerInstant) {
        guard requireHost(id, .invites) else { return }
        dropExpiredInvites(now: now)
        actions.append(.send(.reply(.invites(protection.invites, now: now)), to: id))
    }

    mutating func revoke(_ number: Int64, from id: MemberID) {
        guard requireHost(id, .revoke) else { return }
        guard protection.invites.contains(where: { $0.number == number }) else {
            refuse(id, .notPossible, .revoke, "/revoke: no invite #\(number) is in force; /invites lists them")
            return
        }
        protection.invites.removeAll { $0.number == number }
        needsPersisting = true
        tell(id, "invite #\(number) no longer lets anyone in")
    }

    mutating func dropExpiredInvites(now: ServerInstant) {
        let before = protection.invites.count
        protection.invites.removeAll { now >= $0.expires }
        if protection.invites.count != before { needsPersisting = true }
    }
}

/// Bots' tokens: a host makes one (`/token`), its connections come in under its
/// name, past the lock and the password but not past bans, and may do what its
/// scope says.
extension Room {
    func validToken(_ token: String?) -> BotToken? {
        guard let token, !protection.tokens.isEmpty else { return nil }
        let digest = SecretDigest.hex(token)
        return protection.tokens.first { SecretDigest.equal($0.digest, digest) }
    }

    /// A bot's line is refused when its scope does not cover it.
    mutating func allowedByScope(_ line: InputLine, from id: MemberID) -> Bool {
        guard let scope = members[id]?.scope, scope != .control else { return true }
        switch line {
        case .empty, .command(.help), .command(.who), .command(.status), .command(.time), .command(.queue(nil, _)):
            return true
        case .chat, .command(.me):
            if scope == .chat { return true }
        case .command:
            break
        }
        let command: CommandName? = if case .command(let command) = line { command.name } else { nil }
        refuse(id, .forbidden, command, "this bot's token (\(scope.rawValue)) does not let it do that")
        return false
    }

    mutating func makeToken(_ name: DisplayName, scope: TokenScope, from id: MemberID, now: ServerInstant) {
        guard requireHost(id, .token), let member = members[id] else { return }
        guard protection.tokens.count < configuration.maximumInvites else {
            refuse(id, .notPossible, .token, "/token: this room has \(configuration.maximumInvites) tokens; /untoken one first")
            return
        }
        let number = protection.nextTokenNumber
        protection.nextTokenNumber += 1
        let token = SecretDigest.keyed("token/\(number)/\(now.milliseconds)", secret: member.resumeToken)
        let bot = BotToken(number: number, name: name, scope: scope, digest: SecretDigest.hex(token), by: member.name, at: now)
        protection.tokens.append(bot)
        needsPersisting = true
        actions.append(.send(.reply(.token(bot, token: token)), to: id))
    }

    mutating func listTokens(for id: MemberID) {
        guard requireHost(id, .tokens) else { return }
        actions.append(.send(.reply(.tokens(protection.tokens)), to: id))
    }

    /// Revokes a token and closes the connections that came in with it.
    mutating func revokeToken(_ number: Int64, from id: MemberID, now: ServerInstant) {
        guard requireHost(id, .untoken) else { return }
        guard protection.tokens.contains(where: { $0.number == number }) else {
            refuse(id, .notPossible, .untoken, "/untoken: no token #\(number); /tokens lists them")
            return
        }
        protection.tokens.removeAll { $0.number == number }
        needsPersisting = true
        let bots = members.values.filter { $0.tokenNumber == number }.sorted { $0.arrival < $1.arrival }
        for bot in bots {
            remove(bot.id, reason: .kicked, now: now)
            actions.append(.closeConnection(bot.id, reason: "this bot's token was revoked by \(displayName(id))"))
            // Told in words, as a kick is: a bare departure would look like a kick nobody announced.
            notify("\(bot.name) was let go: its token was revoked by \(displayName(id))", cause: .kick, by: id)
        }
        tell(id, "token #\(number) no longer lets anyone in" + (bots.isEmpty ? "" : "; \(bots.count) connection(s) closed"))
    }
}

extension Room {
    /// A bot token the server's operator issues (the admin API), with a fresh
    /// secret the gateway drew: the token's digest is kept, the token returned.
    public mutating func issueToken(name: DisplayName, scope: TokenScope, secret: String,
                                    now: ServerInstant) -> (token: String, actions: [RoomAction]) {
        let token = SecretDigest.keyed("operator-token/\(protection.nextTokenNumber)", secret: secret)
        let actions = collect(now: now) { room in
            let bot = BotToken(number: room.protection.nextTokenNumber, name: name, scope: scope,
                               digest: SecretDigest.hex(token), by: DisplayName("operator") ?? .guest, at: now)
            room.protection.nextTokenNumber += 1
            room.protection.tokens.append(bot)
            room.needsPersisting = true
        }
        return (token, actions)
    }

    /// The operator revoked a bot token: its bots' connections are closed.
    public mutating func tokenRevokedByOperator(_ number: Int64, now: ServerInstant) -> (found: Bool, actions: [RoomAction]) {
        guard protection.tokens.contains(where: { $0.number == number }) else { return (false, []) }
        let actions = collect(now: now) { room in
            room.protection.tokens.removeAll { $0.number == number }
            room.needsPersisting = true
            for bot in room.members.values.filter({ $0.tokenNumber == number }).sorted(by: { $0.arrival < $1.arrival }) {
                room.remove(bot.id, reason: .kicked, now: now)
                room.actions.append(.closeConnection(bot.id, reason: "this bot's token was revoked by the server's operator"))
                room.notify("\(bot.name) was let go: its token was revoked by the server's operator", cause: .kick, by: nil)
            }
        }
        return (true, actions)
    }

    /// The operator closed the room: every member is told and forgotten.
    public mutating func closedByOperator(now: ServerInstant) -> [RoomAction] {
        collect(now: now) { room in
            for member in room.members.values.sorted(by: { $0.arrival < $1.arrival }) {
                room.actions.append(.closeConnection(member.id, reason: "the server's operator closed this room"))
            }
            room.actions.append(.forgetRoom)
        }
    }
}
