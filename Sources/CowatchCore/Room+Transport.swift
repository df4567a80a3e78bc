import CowatchTime
import SlashCommands

extension Room {
    mutating func play(immediately: Bool, from id: MemberID, now: ServerInstant) {
        guard requireTransport(id, .play) else { return }
        switch state.playback.status {
        case .idle:
            return
        case .playing:
            tell(id, "already playing")
        case .waiting where !immediately:
            tell(id, "already waiting for players to be ready")
        case .paused, .waiting:
            if let edge = currentLiveEdge {
                rejoinLiveEdge(edge, immediately: immediately, from: id, now: now)
                return
            }
            if immediately {
                startPlaying(cause: .play, by: id, now: now)
                notify("\(displayName(id)) started playback at \(state.playback.position) without waiting", cause: .play, by: id)
            } else {
                beginCoordinatedStart(at: state.playback.position, cause: .play, by: id, now: now)
                notify("\(displayName(id)) pressed play at \(state.playback.position)", cause: .play, by: id)
            }
        }
    }

    /// `/play` of a live stream: everyone starts again at its live edge as it is
    /// now, at rate 1, together (or at once with `now`).
    mutating func rejoinLiveEdge(_ edge: LiveEdge, immediately: Bool, from id: MemberID, now: ServerInstant) {
        let position = edge.position(at: now)
        state.playback.rate = .normal
        if immediately {
            state.playback.position = position
            state.playback.at = now
            renewReadinessAnchor()
            startPlaying(cause: .play, by: id, now: now)
            notify("\(displayName(id)) started playback at the live edge (\(position)) without waiting", cause: .play, by: id)
        } else {
            beginCoordinatedStart(at: position, cause: .play, by: id, now: now)
            notify("\(displayName(id)) pressed play: everyone rejoins the live edge at \(position)", cause: .play, by: id)
        }
    }

    mutating func pause(from id: MemberID, now: ServerInstant) {
        guard requireTransport(id, .pause) else { return }
        guard state.playback.status == .playing || state.playback.status == .waiting else {
            tell(id, "already paused")
            return
        }
        holdPaused(at: state.playback.position(at: now), cause: .pause, by: id, now: now)
        notify("\(displayName(id)) paused at \(state.playback.position)", cause: .pause, by: id)
    }

    mutating func seek(_ time: TimeArgument, from id: MemberID, now: ServerInstant) {
        guard requireTransport(id, .seek) else { return }
        let target = time.resolved(from: state.playback.position(at: now))
        guard requireSeekable(target, from: id, .seek) else { return }
        moveGroup(to: target, cause: .seek, by: id, now: now)
        notify("\(displayName(id)) moved to \(target)", cause: .seek, by: id)
    }

    mutating func setRate(_ rate: PlaybackRate, from id: MemberID, now: ServerInstant) {
        guard requireTransport(id, .rate),
              requireNotLive(id, .rate, "a live stream plays at rate 1, as fast as it is made") else { return }
        guard rate != state.playback.rate else {
            tell(id, "the rate is already \(rate)")
            return
        }
        // A rate change while playing starts a new anchor at the current position,
        // so every client's extrapolation stays continuous.
        if state.playback.status == .playing {
            state.playback.position = state.playback.position(at: now)
            state.playback.at = Swift.max(now, state.playback.at)
        }
        state.playback.rate = rate
        publish(.rate, by: id)
        notify("\(displayName(id)) set the rate to \(rate)x", cause: .rate, by: id)
    }

    /// Moves the group to a position: a paused group stays paused there; a playing
    /// or waiting one waits for every player at the new position, then starts together.
    mutating func moveGroup(to target: MediaTime, cause: Cause, by id: MemberID?, now: ServerInstant) {
        switch state.playback.status {
        case .idle:
            return
        case .paused:
            state.playback.position = target
            state.playback.at = now
            renewReadinessAnchor()
            publish(cause, by: id)
        case .playing, .waiting:
            beginCoordinatedStart(at: target, cause: cause, by: id, now: now)
        }
    }

    mutating func holdPaused(at position: MediaTime, cause: Cause, by id: MemberID?, now: ServerInstant) {
        disarmWaitLimit()
        state.playback.status = .paused
        state.playback.position = position
        state.playback.at = now
        renewReadinessAnchor()
        publish(cause, by: id)
    }

    /// `waiting` at `position` until every eligible player reports ready for the new
    /// seq or the wait limit passes. With no eligible player, starts at once.
    mutating func beginCoordinatedStart(at position: MediaTime, cause: Cause, by id: MemberID?, now: ServerInstant) {
        disarmWaitLimit()
        state.playback.position = position
        state.playback.at = now
        renewReadinessAnchor()
        guard eligibleCount > 0 else {
            startPlaying(cause: cause, by: id, now: now)
            return
        }
        state.playback.status = .waiting
        publish(cause, by: id)
        let timer = RoomTimer.waitLimit(anchor: readinessAnchor)
        waiting = WaitingEpisode(cause: cause, by: id, waitLimit: timer)
        actions.append(.schedule(timer, at: now.advanced(by: state.policy.wait)))
    }

    /// `playing` from the held position, with `at` a lead in the future long enough
    /// for the slowest measured member to hear of it, and for every player to have
    /// the time its `/ready` asked for.
    mutating func startPlaying(cause: Cause, by id: MemberID?, now: ServerInstant) {
        disarmWaitLimit()
        state.playback.status = .playing
        state.playback.at = now.advanced(by: startLead())
        publish(cause, by: id)
    }

    mutating func startLead() -> ServerInterval {
        let slowest = slowestRoundTrip ?? members.values
            .filter { $0.connected && $0.joined }
            .map(\.roundTrip)
            .max() ?? .zero
        slowestRoundTrip = slowest
        // The players the group waits for; a scan per start, as the start's
        // state goes to every member anyway.
        let asked = members.values.lazy
            .filter(isEligible)
            .map(\.askedLead.milliseconds)
            .max() ?? 0
        let lead = slowest.milliseconds + asked + configuration.leadMargin.milliseconds
        let bounded = Swift.min(configuration.maximumLead.milliseconds,
                                Swift.max(configuration.minimumLead.milliseconds, lead))
        return ServerInterval(milliseconds: bounded)
    }

    /// Starts the group if it is waiting and every eligible player is ready.
    mutating func startIfEveryoneReady(now: ServerInstant) {
        guard state.playback.status == .waiting, let episode = waiting, readyCount >= eligibleCount else { return }
        startPlaying(cause: episode.cause, by: episode.by, now: now)
        notify("everyone is ready: playing from \(state.playback.position)", cause: .ready, by: nil)
    }

    /// Someone stopped counting for coordination (left, disconnected, kicked, no
    /// longer a player). A waiting group with no player left pauses where it was
    /// (docs/concepts.md, rule 10); otherwise it may now have everyone it waits for.
    mutating func coordinationLost(now: ServerInstant) {
        guard state.playback.status == .waiting else { return }
        if playerCount == 0 {
            holdPaused(at: state.playback.position, cause: .leave, by: nil, now: now)
        } else {
            startIfEveryoneReady(now: now)
        }
    }

    /// The wait limit passed: players still not ready are suspended for stall
    /// recovery and the group starts without them (docs/concepts.md, rule 3).
    mutating func waitLimitReached(anchor: Int64, now: ServerInstant) {
        guard state.playback.status == .waiting, anchor == readinessAnchor, let episode = waiting else { return }
        // The timer has fired: nothing to cancel.
        waiting = nil
        let stragglers = members.values
            .filter { isEligible($0) && !isReady($0) }
            .sorted { $0.arrival < $1.arrival }
        for straggler in stragglers {
            modify(straggler.id) { $0.suspensions.append(.stallRecovery) }
            announce(straggler.id, .suspended(.stallRecovery))
        }
        startPlaying(cause: episode.cause, by: episode.by, now: now)
        let waited = NumberText.decimal(state.policy.wait.seconds, places: 1)
        let names = stragglers.map(\.name.text).joined(separator: ", ")
        notify(names.isEmpty ? "started after waiting \(waited) s" : "started without \(names) after waiting \(waited) s",
               cause: .timeout, by: nil)
    }

    mutating func disarmWaitLimit() {
        if let episode = waiting { actions.append(.cancel(episode.waitLimit)) }
        waiting = nil
    }
}
