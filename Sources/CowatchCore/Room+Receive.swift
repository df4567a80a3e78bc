import CowatchTime
import SlashCommands

extension Room {
    /// A member sent a line (already parsed). Unknown members are ignored: the
    /// gateway may deliver a line that raced with a kick.
    public mutating func receive(_ line: InputLine, from id: MemberID, now: ServerInstant) -> [RoomAction] {
        collect(now: now) { room in
            guard room.members[id] != nil, room.allowedWhileMuted(line, from: id), room.allowedByScope(line, from: id)
            else { return }
            switch line {
            case .empty: return
            case .chat(let text): room.chat(text, me: false, from: id, now: now)
            case .command(let command): room.handle(command, from: id, now: now)
            }
        }
    }

    /// A typed command, for callers that build commands rather than parse lines
    /// (the core benchmark); the gateway passes the parsed `InputLine` above.
    public mutating func receive(_ command: SlashCommand, from id: MemberID, now: ServerInstant) -> [RoomAction] {
        receive(.command(command), from: id, now: now)
    }

    /// A timer armed by an earlier `schedule` action came due.
    public mutating func timerFired(_ timer: RoomTimer, now: ServerInstant) -> [RoomAction] {
        collect(now: now) { room in
            switch timer {
            case .waitLimit(let anchor): room.waitLimitReached(anchor: anchor, now: now)
            case .catchupEnds(let id, let serial): room.catchupEnded(id, serial: serial, now: now)
            case .resumeExpires(let id, let serial): room.resumeExpired(id, serial: serial, now: now)
            case .roomExpires(let since): room.expiryReached(emptySince: since)
            }
        }
    }

    mutating func handle(_ command: SlashCommand, from id: MemberID, now: ServerInstant) {
        switch command {
        case .help(let topic): help(topic, from: id)
        case .nick(let name): nick(name, from: id)
        case .watch(let url, let title): watch(url, title: title, from: id, now: now)
        case .watchOwn(let copy, let title): watchOwn(copy, title: title, from: id, now: now)
        case .join: join(id, now: now)
        case .leave: leave(id, now: now)
        case .end: end(from: id, now: now)
        case .play(let immediately): play(immediately: immediately, from: id, now: now)
        case .pause: pause(from: id, now: now)
        case .seek(let time): seek(time, from: id, now: now)
        case .rate(let rate): setRate(rate, from: id, now: now)
        case .suspend(let reason): suspend(id, reason: reason, now: now)
        case .resume(let reason, let time): resume(id, reason: reason, at: time, now: now)
        case .catchup(let seconds): catchup(id, seconds: seconds, now: now)
        case .queue(let url, let title): queue(url, title: title, from: id)
        case .next: next(from: id, now: now)
        case .subtitles(let url, let label): subtitles(url, label: label, from: id)
        case .dequeue(let item): dequeue(item, from: id)
        case .move(let item, let position): move(item, to: position, from: id)
        case .autoplay(let on): setAutoplay(on, for: id)
        case .player(let on): setPlayer(on, for: id, now: now)
        case .ready(let seq, let lead): ready(id, seq: seq, lead: ServerInterval(milliseconds: Int64(lead)), now: now)
        case .buffering: buffering(id, now: now)
        case .ended(let seq): ended(id, seq: seq, now: now)
        case .duration(let seq, let length): mediaReport(id, seq: seq, length: length, now: now)
        case .have(let seq, let yes): haveReport(id, seq: seq, has: yes, now: now)
        case .time(let client): actions.append(.send(.time(client: client, server: now), to: id))
        case .who: actions.append(.send(.reply(.who(participants)), to: id))
        case .status:
            let reply = Reply.status(state, position: state.playback.position(at: now), now: now)
            actions.append(.send(.reply(reply), to: id))
        case .policy(let change): policy(change, from: id)
        case .op(let target): op(target, from: id)
        case .deop(let target): deop(target, from: id)
        case .kick(let target, let reason): kick(target, reason: reason, from: id, now: now)
        case .ban(let target, let minutes, let reason): ban(target, minutes: minutes, reason: reason, from: id, now: now)
        case .unban(let target): unban(target, from: id, now: now)
        case .bans: listBans(for: id, now: now)
        case .mute(let target): mute(target, on: true, from: id)
        case .unmute(let target): mute(target, on: false, from: id)
        case .slow(let seconds): slow(seconds, from: id)
        case .lock: lock(true, from: id)
        case .unlock: lock(false, from: id)
        case .password(let password): setPassword(password, from: id, now: now)
        case .invite(let uses, let minutes): invite(uses: uses, minutes: minutes, from: id, now: now)
        case .invites: listInvites(for: id, now: now)
        case .revoke(let number): revoke(number, from: id)
        case .token(let name, let scope): makeToken(name, scope: scope, from: id, now: now)
        case .tokens: listTokens(for: id)
        case .untoken(let number): revokeToken(number, from: id, now: now)
        case .listed(let on): list(on, from: id)
        case .me(let text): chat(text, me: true, from: id, now: now)
        case .voice(let command): voice(command, from: id)
        }
    }

    // MARK: - Refusals shared by several commands

    /// The member may use transport and queue commands under the room's policy.
    mutating func requireControl(_ id: MemberID, _ command: CommandName) -> Bool {
        guard state.policy.control == .hosts, members[id]?.role != .host, members[id]?.scope != .control else { return true }
        refuse(id, .forbidden, command, "/\(command.rawValue): only hosts control playback in this room (/policy control hosts)")
        return false
    }

    mutating func requireHost(_ id: MemberID, _ command: CommandName) -> Bool {
        guard members[id]?.role != .host else { return true }
        refuse(id, .forbidden, command, "/\(command.rawValue): only hosts may do that")
        return false
    }

    /// There is an active group session and the member is in it.
    mutating func requireSessionMember(_ id: MemberID, _ command: CommandName) -> Bool {
        guard state.session?.isActive == true else {
            refuse(id, .noSession, command, "/\(command.rawValue): there is no group session; /watch <url> starts one")
            return false
        }
        guard members[id]?.joined == true else {
            refuse(id, .noSession, command, "/\(command.rawValue): you are not in the group session; /join first")
            return false
        }
        return true
    }

    /// A suspended member's transport commands change nothing for the group
    /// (docs/concepts.md, rule 4); it is told how to rejoin instead.
    mutating func requireUnsuspended(_ id: MemberID, _ command: CommandName) -> Bool {
        guard let member = members[id], member.isSuspended else { return true }
        let reasons = member.suspensions.map(\.rawValue).joined(separator: ", ")
        refuse(id, .suspended, command,
               "/\(command.rawValue): you are suspended (\(reasons)); your player is separate from the group until /resume")
        return false
    }

    mutating func requirePlayer(_ id: MemberID, _ command: CommandName) -> Bool {
        guard members[id]?.player != true else { return true }
        refuse(id, .notAPlayer, command, "/\(command.rawValue): only player connections report playback (/player on)")
        return false
    }

    /// The checks every transport command passes, in the order users meet them.
    mutating func requireTransport(_ id: MemberID, _ command: CommandName) -> Bool {
        requireSessionMember(id, command) && requireControl(id, command) && requireUnsuspended(id, command)
    }
}
