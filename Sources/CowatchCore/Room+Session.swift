import CowatchTime
import SlashCommands

extension Room {
    /// `/watch`: start the group session, or replace its activity for everyone.
    /// The item already current, by any link to it, is not shared again: a new
    /// title given with it renames it.
    mutating func watch(_ url: MediaURL, title: String?, from id: MemberID, now: ServerInstant) {
        let active = state.session?.isActive == true
        if active {
            guard requireSessionMember(id, .watch) else { return }
        }
        guard requireControl(id, .watch), requireMediaHost(url, from: id, .watch) else { return }
        if active, let current = state.session?.activity, current.identifier == Self.source(of: url).identifier(for: url) {
            guard let title, title != current.title else {
                tell(id, "already watching \(ShownText.quoted(current.title))\(current.url.map { " (\($0))" } ?? "")")
                return
            }
            state.session?.activity.title = title
            publish(.watch, by: id)
            notify("\(displayName(id)) renamed \(ShownText.quoted(current.title)) to \(ShownText.quoted(title))", cause: .watch, by: id)
            return
        }
        share(url: url, title: title, cause: .watch, by: id, now: now)
        notify("\(displayName(id)) shared \(ShownText.quoted(state.session?.activity.title ?? url.text))\(rateCarried)", cause: .watch, by: id)
    }

    /// What plays a link. The parser refuses the links no player plays, so a
    /// refusal here is only a link stored before those rules: it stays a file, as it was.
    static func source(of url: MediaURL) -> MediaSource {
        MediaSource.classify(url).source ?? .file
    }

    /// Makes `url` the current activity, paused at the link's starting time (0
    /// unless a provider's link names one; docs/concepts.md, rule 9). Starts a new
    /// session when none is active, joining every member who joins sessions.
    mutating func share(url: MediaURL, title: String?, cause: Cause, by id: MemberID?, now: ServerInstant,
                        startPlaying: Bool = false) {
        let source = Self.source(of: url)
        share(Activity(id: "a\(nextActivityNumber)", url: url, title: title ?? Self.defaultTitle(for: url),
                       identifier: source.identifier(for: url), source: source, live: source.isLiveLink),
              cause: cause, by: id, now: now, startPlaying: startPlaying)
    }

    /// Makes `activity` current (a link's, or an own copy's): see `share(url:...)`.
    mutating func share(_ activity: Activity, cause: Cause, by id: MemberID?, now: ServerInstant, startPlaying: Bool = false) {
        let source = activity.source
        nextActivityNumber += 1
        forgetCopies()
        let wasActive = state.session?.isActive == true
        // Who plays the item may change with it (an own copy counts only the
        // players that have it), so every member is counted again around the change.
        for member in members.values { count(member, sign: -1) }
        if wasActive {
            state.session?.activity = activity
        } else {
            state.session = GroupSession(state: .joined, reason: nil, activity: activity)
        }
        for member in members.values { count(member, sign: 1) }
        if wasActive {
            dropSuspensionsTiedToItem()
        } else {
            for member in members.values.sorted(by: { $0.arrival < $1.arrival })
            where member.joinsNewSessions || member.id == id {
                putInSession(member.id)
            }
        }
        disarmWaitLimit()
        let start = source.start ?? .zero
        state.playback = Playback(status: .paused, item: activity.identifier, rate: state.playback.rate,
                                  position: start, at: now, by: id, cause: cause)
        itemSeq = state.seq + 1
        if startPlaying {
            beginCoordinatedStart(at: start, cause: cause, by: id, now: now)
        } else {
            renewReadinessAnchor()
            publish(cause, by: id)
        }
    }

    /// Readiness and stall suspensions answered the old item; a catch-up replayed it.
    mutating func dropSuspensionsTiedToItem() {
        for member in members.values.sorted(by: { $0.arrival < $1.arrival })
        where member.suspensions.contains(.stallRecovery) || member.suspensions.contains(.catchup) {
            if member.suspensions.contains(.catchup) {
                actions.append(.cancel(.catchupEnds(member.id, serial: member.catchupSerial)))
            }
            modify(member.id) { $0.suspensions.removeAll { $0 == .stallRecovery || $0 == .catchup } }
            announce(member.id, .resumed(nil))
        }
    }

    /// The server shares media only from the hosts its operator allows, when it
    /// names any (`media-hosts`).
    mutating func requireMediaHost(_ url: MediaURL, from id: MemberID, _ command: CommandName) -> Bool {
        let allowed = configuration.mediaHosts
        guard !allowed.isEmpty, !allowed.contains(url.host) else { return true }
        refuse(id, .mediaHost, command,
               "/\(command.rawValue): this server plays media only from \(allowed.joined(separator: ", ")), not from \(url.host)")
        return false
    }

    /// The last path segment of the URL, without query: a readable default title.
    /// A provider's video is named by its provider and id (its links' last segment
    /// is often just `watch`); the page's player may know its real title, the
    /// server does not.
    static func defaultTitle(for url: MediaURL) -> String {
        switch source(of: url) {
        case .youtube(let id, _, _): return "YouTube video \(id)"
        case .vimeo(let id, _): return "Vimeo video \(id)"
        case .own(let copy): return copy.neutralTitle
        case .file: break
        }
        let path = url.text.prefix { $0 != "?" && $0 != "#" }
        let segment = path.split(separator: "/").last.map(String.init) ?? url.text
        return segment.isEmpty ? url.text : segment
    }

    mutating func join(_ id: MemberID, now: ServerInstant) {
        guard state.session?.isActive == true else {
            refuse(id, .noSession, .join, "/join: there is no group session; /watch <url> starts one")
            return
        }
        guard members[id]?.joined == false else {
            tell(id, "you are already in the group session")
            return
        }
        // A late joiner adopts the group state; its arrival never moves the group.
        putInSession(id)
        handState(to: id)
    }

    /// Joins a member to the session as of the current seq (docs/concepts.md, rule 7).
    mutating func putInSession(_ id: MemberID) {
        let seq = state.seq
        modify(id) {
            $0.joined = true
            $0.joinedSeq = seq
        }
        announce(id, .joinedSession)
    }

    /// Takes a member out of the session: its catch-up is disarmed, its
    /// suspensions and readiness are dropped.
    mutating func takeOutOfSession(_ id: MemberID) {
        cancelCatchup(id)
        modify(id) {
            $0.joined = false
            $0.suspensions.removeAll()
            $0.readySeq = -1
        }
        announce(id, .leftSession)
    }

    mutating func leave(_ id: MemberID, now: ServerInstant) {
        guard state.session?.isActive == true, members[id]?.joined == true else {
            refuse(id, .noSession, .leave, "/leave: you are not in a group session")
            return
        }
        takeOutOfSession(id)
        coordinationLost(now: now)
    }

    mutating func end(from id: MemberID, now: ServerInstant) {
        guard requireSessionMember(id, .end), requireControl(id, .end) else { return }
        disarmWaitLimit()
        state.session?.state = .invalidated
        state.session?.reason = "ended"
        for member in members.values.sorted(by: { $0.arrival < $1.arrival }) where member.joined {
            takeOutOfSession(member.id)
        }
        state.playback = .idle(at: now, cause: .end, by: id)
        renewReadinessAnchor()
        publish(.end, by: id)
        notify("\(displayName(id)) ended the session for everyone", cause: .end, by: id)
    }

    mutating func queue(_ url: MediaURL?, title: String?, from id: MemberID) {
        guard let url else {
            actions.append(.send(.reply(.queue(state.queue)), to: id))
            return
        }
        if state.session?.isActive == true {
            guard requireSessionMember(id, .queue) else { return }
        }
        guard requireControl(id, .queue), requireMediaHost(url, from: id, .queue) else { return }
        guard state.queue.count < configuration.maximumQueueLength else {
            refuse(id, .queueFull, .queue, "/queue: the queue is full (\(configuration.maximumQueueLength) items)")
            return
        }
        let item = QueueItem(id: "q\(nextQueueNumber)", url: url, title: title ?? Self.defaultTitle(for: url))
        guard listedBytes + item.url.text.utf8.count + item.title.utf8.count <= configuration.maximumStateBytes else {
            refuse(id, .queueFull, .queue, "/queue: the queue's links and titles would take more than "
                   + "\(configuration.maximumStateBytes) bytes, which every member is sent with each change; "
                   + "/dequeue an item or share a shorter link")
            return
        }
        nextQueueNumber += 1
        state.queue.append(item)
        publish(.queue, by: id)
        notify("\(displayName(id)) queued \(ShownText.quoted(item.title))", cause: .queue, by: id)
    }

    /// `/subtitles`: a WebVTT track for the current activity, or none at all. The
    /// tracks go with the activity (a new item starts without any).
    mutating func subtitles(_ url: MediaURL?, label: String?, from id: MemberID) {
        guard let session = state.session, session.isActive else {
            refuse(id, .noSession, .subtitles, "/subtitles: nothing is playing; /watch <url> first")
            return
        }
        guard requireSessionMember(id, .subtitles), requireControl(id, .subtitles) else { return }
        guard let url else {
            guard !session.activity.subtitles.isEmpty else {
                tell(id, "\(ShownText.quoted(session.activity.title)) has no subtitles")
                return
            }
            state.session?.activity.subtitles = []
            publish(.subtitles, by: id)
            notify("\(displayName(id)) removed the subtitles of \(ShownText.quoted(session.activity.title))", cause: .subtitles, by: id)
            return
        }
        guard requireMediaHost(url, from: id, .subtitles) else { return }
        let tracks = session.activity.subtitles
        if tracks.contains(where: { $0.url == url }) {
            tell(id, "that subtitle track is already there")
            return
        }
        guard tracks.count < configuration.maximumSubtitleTracks else {
            refuse(id, .notPossible, .subtitles,
                   "/subtitles: \(ShownText.quoted(session.activity.title)) already has \(tracks.count) tracks, the most it may have")
            return
        }
        let number = (tracks.compactMap { Int($0.id.dropFirst()) }.max() ?? 0) + 1
        let track = SubtitleTrack(id: "s\(number)", url: url, label: label ?? Self.defaultTitle(for: url))
        guard listedBytes + track.url.text.utf8.count + track.label.utf8.count <= configuration.maximumStateBytes else {
            refuse(id, .notPossible, .subtitles, "/subtitles: the queue's and tracks' links and labels would take more than "
                   + "\(configuration.maximumStateBytes) bytes, which every member is sent with each change")
            return
        }
        state.session?.activity.subtitles.append(track)
        publish(.subtitles, by: id)
        notify("\(displayName(id)) added subtitles \(ShownText.quoted(track.label)) to \(ShownText.quoted(session.activity.title))", cause: .subtitles, by: id)
    }

    /// The bytes of links, titles and labels the queue and the current item's
    /// subtitle tracks add to every `state` (`maximumStateBytes` bounds them).
    var listedBytes: Int {
        let queued = state.queue.reduce(0) { $0 + $1.url.text.utf8.count + $1.title.utf8.count }
        let tracks = (state.session?.activity.subtitles ?? []).reduce(0) { $0 + $1.url.text.utf8.count + $1.label.utf8.count }
        return queued + tracks
    }

    /// Hosts keep the queue in order: take an item out, or move it.
    mutating func dequeue(_ reference: QueueReference, from id: MemberID) {
        guard requireHost(id, .dequeue), let index = queueIndex(reference, from: id, .dequeue) else { return }
        let item = state.queue.remove(at: index)
        publish(.queue, by: id)
        notify("\(displayName(id)) took \(ShownText.quoted(item.title)) out of the queue", cause: .queue, by: id)
    }

    mutating func move(_ reference: QueueReference, to position: Int, from id: MemberID) {
        guard requireHost(id, .move), let index = queueIndex(reference, from: id, .move) else { return }
        let target = min(position, state.queue.count) - 1
        guard target != index else {
            tell(id, "\(ShownText.quoted(state.queue[index].title)) is already number \(index + 1) in the queue")
            return
        }
        let item = state.queue.remove(at: index)
        state.queue.insert(item, at: target)
        publish(.queue, by: id)
        notify("\(displayName(id)) moved \(ShownText.quoted(item.title)) to number \(target + 1) in the queue", cause: .queue, by: id)
    }

    private mutating func queueIndex(_ reference: QueueReference, from id: MemberID, _ command: CommandName) -> Int? {
        let index: Int? = switch reference {
        case .position(let number): number <= state.queue.count ? number - 1 : nil
        case .id(let itemID): state.queue.firstIndex { $0.id == itemID }
        }
        guard let index else {
            let what = state.queue.isEmpty ? "the queue is empty" : "the queue has \(state.queue.count) item(s)"
            refuse(id, .notPossible, command, "/\(command.rawValue): no item \(reference.text) (\(what); /queue lists them)")
            return nil
        }
        return index
    }

    mutating func next(from id: MemberID, now: ServerInstant) {
        if state.session?.isActive == true {
            guard requireSessionMember(id, .next) else { return }
        }
        guard requireControl(id, .next) else { return }
        guard !state.queue.isEmpty else {
            refuse(id, .queueEmpty, .next, "/next: the queue is empty; /queue <url> adds an item")
            return
        }
        let item = state.queue.removeFirst()
        // A playing group goes on playing the next item, starting together; a
        // paused one waits at its start.
        let playing = state.playback.status == .playing || state.playback.status == .waiting
        share(url: item.url, title: item.title, cause: .next, by: id, now: now, startPlaying: playing)
        notify("\(displayName(id)) moved everyone to \(ShownText.quoted(item.title))\(rateCarried)", cause: .next, by: id)
    }

    /// The rate is the room's, kept from item to item as a player keeps its default
    /// rate (docs/concepts.md, rule 12); a new item that starts at another rate
    /// than 1 says so, so that nobody is surprised by it.
    var rateCarried: String {
        state.playback.rate == .normal ? "" : " (at \(state.playback.rate)x, the room's rate; /rate 1 for normal speed)"
    }

    /// A player reached the end of the item. With autoplay on for at least one
    /// member and something queued, the room moves on and starts together;
    /// otherwise it pauses at the end.
    mutating func ended(_ id: MemberID, seq: Int64, now: ServerInstant) {
        guard requirePlayer(id, .ended) else { return }
        guard let member = members[id], member.joined, !member.isSuspended, playsCurrentItem(member),
              state.playback.status == .playing, requireCurrentReport(seq, oldest: itemSeq, from: id, .ended)
        else { return }
        if autoplayCount > 0, !state.queue.isEmpty {
            let item = state.queue.removeFirst()
            share(url: item.url, title: item.title, cause: .next, by: nil, now: now, startPlaying: true)
            notify("autoplay: on to \(ShownText.quoted(item.title))\(rateCarried)", cause: .next, by: nil)
        } else {
            holdPaused(at: state.playback.position(at: now), cause: .ended, by: id, now: now)
            notify("\(ShownText.quoted(state.session?.activity.title ?? "the item")) ended", cause: .ended, by: id)
        }
    }

    mutating func setAutoplay(_ on: Bool, for id: MemberID) {
        guard members[id]?.autoplay != on else {
            tell(id, "autoplay is already \(on ? "on" : "off")")
            return
        }
        modify(id) { $0.autoplay = on }
        announce(id, .autoplay)
    }

    mutating func setPlayer(_ on: Bool, for id: MemberID, now: ServerInstant) {
        guard members[id]?.player != on else {
            tell(id, "player is already \(on ? "on" : "off")")
            return
        }
        modify(id) {
            $0.player = on
            $0.readySeq = -1
        }
        announce(id, .player)
        if on { handState(to: id) } else { coordinationLost(now: now) }
    }
}
