import CowatchTime
import SlashCommands

extension Room {
    mutating func suspend(_ id: MemberID, reason: SuspensionReason, now: ServerInstant) {
        guard requireSessionMember(id, .suspend), let member = members[id] else { return }
        guard !member.suspensions.contains(reason) else {
            tell(id, "you are already suspended for \(reason)")
            return
        }
        addSuspension(reason, to: id)
        startIfEveryoneReady(now: now)
    }

    mutating func addSuspension(_ reason: SuspensionReason, to id: MemberID) {
        guard members[id]?.suspensions.contains(reason) == false else { return }
        modify(id) { $0.suspensions.append(reason) }
        announce(id, .suspended(reason))
    }

    /// `/resume [reason] [at <time>]`: ends one suspension or all; a proposed time
    /// moves the whole group there (SharePlay's `end(proposingNewTime:)`).
    mutating func resume(_ id: MemberID, reason: SuspensionReason?, at time: TimeArgument?, now: ServerInstant) {
        guard requireSessionMember(id, .resume), let member = members[id] else { return }
        if let time {
            guard requireControl(id, .resume),
                  requireSeekable(time.resolved(from: state.playback.position(at: now)), from: id, .resume) else { return }
        }
        if let reason, !member.suspensions.contains(reason) {
            refuse(id, .notSuspended, .resume, "/resume: you are not suspended for \(reason)")
            return
        }
        if member.suspensions.isEmpty && time == nil {
            refuse(id, .notSuspended, .resume, "/resume: you are not suspended")
            return
        }
        if !member.suspensions.isEmpty {
            endSuspensions(of: id, matching: reason, handState: time == nil)
        }
        if let time {
            let target = time.resolved(from: state.playback.position(at: now))
            moveGroup(to: target, cause: .resume, by: id, now: now)
            notify("\(displayName(id)) moved everyone to \(target)", cause: .resume, by: id)
        } else {
            startIfEveryoneReady(now: now)
        }
    }

    /// Ends `reason` (every reason when nil). When no suspension remains the
    /// member rejoins at group time: it is handed the current state.
    mutating func endSuspensions(of id: MemberID, matching reason: SuspensionReason?, handState hand: Bool) {
        guard let member = members[id] else { return }
        if reason == nil || reason == .catchup, member.suspensions.contains(.catchup) {
            cancelCatchup(id)
        }
        modify(id) { member in
            if let reason { member.suspensions.removeAll { $0 == reason } } else { member.suspensions.removeAll() }
        }
        announce(id, .resumed(reason))
        if hand, members[id]?.isSuspended == false { handState(to: id) }
    }

    /// `/buffering`: by room policy, the staller alone is suspended (`continue`), or
    /// the group waits for it (`wait`). A suspended member stalls only itself.
    mutating func buffering(_ id: MemberID, now: ServerInstant) {
        guard requirePlayer(id, .buffering), let member = members[id], member.joined,
              state.playback.status != .idle, playsCurrentItem(member)
        else { return }
        // A late joiner still loading stalls only itself: its arrival never moves the group.
        let inStep = isReady(member) || member.joinedSeq < readinessAnchor
        if member.isSuspended || state.policy.stall == .continue || !inStep {
            if !member.suspensions.contains(.stallRecovery) {
                addSuspension(.stallRecovery, to: id)
                startIfEveryoneReady(now: now)
            }
            return
        }
        switch state.playback.status {
        case .playing:
            beginCoordinatedStart(at: state.playback.position(at: now), cause: .stall, by: id, now: now)
            notify("waiting for \(member.name), who is buffering", cause: .stall, by: id)
        case .waiting where isReady(member):
            modify(id) { $0.readySeq = -1 }
            announce(id, .stalled)
        case .idle, .paused, .waiting:
            announce(id, .stalled)
        }
    }

    /// `/ready <seq>`: the player is loaded and at the position of state `seq`.
    /// Reports older than the readiness anchor, or newer than anything sent, are
    /// ignored (docs/concepts.md, rule 8). Ends a stall-recovery suspension.
    /// `lead` is what the player needs between hearing of the start and the
    /// start (Room+Transport.swift: startLead); each report replaces the last.
    mutating func ready(_ id: MemberID, seq: Int64, lead: ServerInterval = .zero, now: ServerInstant) {
        guard requirePlayer(id, .ready), let member = members[id], member.joined, state.playback.status != .idle,
              requireCurrentReport(seq, oldest: readinessAnchor, from: id, .ready)
        else { return }
        let wasReady = isReady(member)
        modify(id) {
            $0.readySeq = Swift.max($0.readySeq, seq)
            $0.askedLead = lead
        }
        if member.suspensions.contains(.stallRecovery) {
            endSuspensions(of: id, matching: .stallRecovery, handState: true)
        } else if !wasReady && playerCount <= configuration.readinessAnnouncedUpTo {
            announce(id, .ready)
        }
        startIfEveryoneReady(now: now)
    }

    /// A report names the state it answers (docs/concepts.md, rule 8): one for a
    /// state never sent, or older than `oldest`, changes nothing and its sender is
    /// told (`stale-report`; the page lets these pass silently, a person typing
    /// them learns why nothing happened).
    mutating func requireCurrentReport(_ seq: Int64, oldest: Int64, from id: MemberID, _ command: CommandName) -> Bool {
        if seq > state.seq {
            refuse(id, .staleReport, command, "/\(command.rawValue) \(seq): no state \(seq) was sent; the latest is \(state.seq)")
            return false
        }
        if seq < oldest {
            refuse(id, .staleReport, command,
                   "/\(command.rawValue) \(seq): the group has moved on since state \(seq); answer state \(state.seq)")
            return false
        }
        return true
    }

    /// `/catchup`: for this member alone, rewind and replay at 2x inside a
    /// suspension that ends by itself when it is level with the group.
    mutating func catchup(_ id: MemberID, seconds: Double, now: ServerInstant) {
        guard requireSessionMember(id, .catchup), state.playback.status != .idle,
              requireNotLive(id, .catchup, "a live stream cannot be replayed faster than it is made") else { return }
        let replayRate = 2.0
        let groupRate = state.playback.status == .playing ? state.playback.rate.value : 0
        guard groupRate < replayRate else {
            refuse(id, .notPossible, .catchup, "/catchup: the group plays at \(state.playback.rate)x, too fast to catch up at 2x")
            return
        }
        let groupPosition = state.playback.position(at: now)
        let from = groupPosition.offset(by: -seconds)
        let rewind = groupPosition.seconds - from.seconds
        guard rewind > 0 else {
            refuse(id, .notPossible, .catchup, "/catchup: nothing to replay at the very start")
            return
        }
        // Replaying at 2x closes the gap at (2 - group rate) seconds per second.
        let until = now.advanced(by: ServerInterval(seconds: rewind / (replayRate - groupRate)))
        cancelCatchup(id)
        let serial = (members[id]?.catchupSerial ?? 0) + 1
        modify(id) { $0.catchupSerial = serial }
        addSuspension(.catchup, to: id)
        actions.append(.send(.catchup(Catchup(from: from, rate: PlaybackRate(clamping: replayRate), until: until)), to: id))
        actions.append(.schedule(.catchupEnds(id, serial: serial), at: until))
        notify("\(displayName(id)) is catching up on the last \(NumberText.decimal(rewind, places: 1)) s", cause: .catchup, by: id)
        startIfEveryoneReady(now: now)
    }

    mutating func catchupEnded(_ id: MemberID, serial: Int64, now: ServerInstant) {
        guard let member = members[id], member.catchupSerial == serial, member.suspensions.contains(.catchup)
        else { return }
        modify(id) { $0.suspensions.removeAll { $0 == .catchup } }
        announce(id, .resumed(.catchup))
        if members[id]?.isSuspended == false { handState(to: id) }
        startIfEveryoneReady(now: now)
    }

    /// Disarms a catch-up in progress (ended early, left, or replaced).
    mutating func cancelCatchup(_ id: MemberID) {
        guard let member = members[id], member.suspensions.contains(.catchup) else { return }
        actions.append(.cancel(.catchupEnds(id, serial: member.catchupSerial)))
        modify(id) { $0.catchupSerial += 1 }
    }
}
