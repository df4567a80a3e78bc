import CowatchCore
import CowatchTime

/// mpv as a member of a room, decided without touching mpv or the socket: the
/// page's player (`static/sync/player.js`, `plan.js`, `follow.js`) for mpv.
///
/// Each input (a room event, an mpv event, a tick, a start's timer) comes with
/// mpv's readings, the server time `now` (from the `/time` estimate) and the
/// local monotonic clock `monotonic`, and returns the actions to carry out, in
/// order. `Sources/cowatch/MpvRunner.swift` reads mpv and carries them out.
///
/// What it does, as the page does:
/// - follows the room's state: holds a paused or waiting group's position with an
///   exact seek, says `/ready <seq>` there with enough data, starts at a playing
///   state's `at` (a coordinated start) or, late, at a planned instant ahead after
///   seeking, follows a catch-up's replay, and stands aside while suspended;
/// - keeps in step by nudging `speed`, and re-joins (an exact seek and a
///   scheduled start) beyond `Steadiness.seek`;
/// - reports what only a player knows: `/buffering` for a stall that lasts
///   (`paused-for-cache`), `/ready` once recovered, `/ended <seq>` at the end,
///   `/duration <seq> <seconds>`, and `/suspend coordinatedPlaybackNotPossible`
///   when the media does not load;
/// - tells mpv's own changes from the user's: a `pause` change it did not ask for
///   is the user's space bar (`/pause` or `/play`), a `seek` it did not cause is
///   the user's (`/seek <t>` once it lands). Then it leaves mpv alone until the
///   room answers (or `userGrace` passes: a refused command is undone by the
///   room's own state);
/// - a user's pause the room refuses because the member may not pause it (the
///   room's `/policy control hosts`) steps that member out alone, as the page's
///   media controls do: `/suspend pausedForMe`, mpv stays paused, the user is
///   told why in words, and their next play is `/resume pausedForMe`, back in
///   step with the room;
/// - plays an own-copy item from the file it was given only when that file is
///   the item (size, hash, then the length mpv reads), says `/have <seq> yes|no`,
///   and without it stays in the room not watching; and shares that file as the
///   room's item when asked (`DesktopPlayer+OwnCopy.swift`).
public struct DesktopPlayer: Sendable {
    public enum MpvEvent: Sendable, Hashable {
        case fileLoaded
        case seek
        case playbackRestart
        /// `end-file` with its `reason` (`eof`, `stop`, `quit`, `error`, `redirect`).
        case endFile(reason: String)
        case pauseChanged(Bool)
    }

    public enum Input: Sendable, Hashable {
        /// A connection opened (before its welcome): reports may be needed again.
        case connected
        case room(RoomEvent)
        case mpv(MpvEvent)
        case tick
        /// The timer of scheduled start number `Int` fired.
        case wake(Int)
    }

    public enum Action: Sendable, Hashable {
        case send(String)
        /// `loadfile` this URL or path (paused).
        case load(String)
        /// `stop`: mpv shows nothing (idle), as for a room without an item.
        case unload
        /// Words for the person at mpv, always shown.
        case tell(String)
        case pause
        /// Set `speed`, then unpause at server time `at`, to the instant.
        case play(at: PreciseInstant, speed: Double)
        /// `seek <to> absolute+exact`.
        case seek(Double)
        case speed(Double)
        /// Call `.wake(id)` after this long; one timer: it replaces any.
        case wake(Int, after: PreciseInterval)
        case cancelWake
        /// The player's history, for `--verbose`.
        case note(String)
    }

    /// What the player is doing, for a status line.
    public enum Plan: Sendable, Hashable {
        case none(String)
        case detached(String, reasons: [String])
        case hold(Timeline, waitingSeq: Int64?, mode: String)
        case run(Timeline, mode: String)

        public var mode: String {
            switch self {
            case .none(let mode), .detached(let mode, _), .hold(_, _, let mode), .run(_, let mode): mode
            }
        }
    }

    struct Join: Sendable, Hashable {
        var id: Int
        var key: Timeline
        var startAt: PreciseInstant
        var position: Double
        var rate: Double
        var seekBegan: MonotonicInstant?
        var armed = false
    }

    struct Verify: Sendable, Hashable {
        var startAt: PreciseInstant
        var position: Double
        var rate: Double
        var calledAt: MonotonicInstant
    }

    /// The user's own change, sent to the room: hands off mpv until the room
    /// answers with a newer state than `seq`, or until `until`.
    struct UserChange: Sendable, Hashable {
        var seq: Int64
        var until: MonotonicInstant
        /// For the user's pause: where mpv stopped.
        var pausedAt: Double?
    }

    /// How far from the room's paused position mpv may stay where its user
    /// paused it. The room pauses where its timeline is when the `/pause`
    /// arrives, a trip later than the key; seeking mpv there at once would race
    /// the user's next key (an arrow's seek, asked before that seek and landing
    /// under it, would be lost). Further than this, the room's place is shown.
    public static let userPauseStandsWithin = 0.5

    /// How long after the user's own change the player waits for the room's answer.
    public static let userGrace = MonotonicDuration.milliseconds(2000)
    /// A `pause` change this soon after asking for the other value is mpv
    /// catching up with an earlier request, not the user.
    public static let ownPauseWindow = MonotonicDuration.milliseconds(250)

    /// The file given on the command line: matched to an own-copy item by
    /// identity, and played in place of a link (unchecked: a link has no identity to match).
    public let localFile: LocalCopy?
    /// What mpv was last told to load, so that nothing is loaded twice.
    var loadedTarget: String?
    /// For the current own-copy item: where the check of `localFile` stands.
    var copy: CopyCheck?
    /// The `/have` last said: for which item, and the answer.
    var haveSent: (item: String, yes: Bool)?
    /// Sharing `localFile` as the room's item, when asked.
    var share: Share?

    public private(set) var state: RoomState?
    public private(set) var me: Participant?
    var catchup: (until: PreciseInstant, timeline: Timeline)?
    var src: String?
    public private(set) var mediaError: String?
    var suspendedForMedia = false
    var readySent: Int64?
    var durationSent: String?
    var endedSent: Int64?
    /// Since when a confirmed stall lasts.
    var stall: MonotonicInstant?
    /// When `/ready` was last said while stalled (nil: not on this connection).
    var stallReadySentAt: MonotonicInstant?
    var stallCheck: (since: MonotonicInstant, position: Double)?
    var appliedSeq: Int64?

    var join: Join?
    var joins = 0
    var running: Timeline?
    var verify: Verify?
    var drifts: [Double] = []
    public private(set) var drift: Double?
    var nudging = false
    public private(set) var playLatency = Starts.playLatencyInitial
    public private(set) var joinLead = Starts.joinLeadInitial

    var wantPaused = true
    /// When the player last asked mpv to pause or play (nil: never).
    var pauseAskedAt: MonotonicInstant?
    /// The player's own seeks mpv has not yet said `seek` for.
    var ownSeeksUnseen = 0
    /// One of the player's own seeks is under way (until mpv's `playback-restart`).
    var ownSeek = false
    var seekTarget: Double?
    /// The held course the player last sought the covering frame for: mpv is
    /// left on whatever frame that seek showed (a file whose frames are not
    /// evenly spaced may show a neighbour), rather than sought again.
    var shownFor: Timeline?
    var userSeekPending = false
    /// The user's seek came while the player's own was under way, to this
    /// target: mpv may restart playback for each in turn, the player's first.
    var userSeekBehindOwn: Double?
    /// When the player's own seek landed with the user's still to come: if no
    /// restart follows within `Self.userSeekWait`, mpv merged the two (the user
    /// sought to the same place), and the user's seek is reported where mpv is.
    var ownLandedBeforeUser: MonotonicInstant?
    static let userSeekWait = MonotonicDuration.seconds(1)
    var userChange: UserChange?
    /// The user paused where they may not pause the room, and the player stepped
    /// them out (`/suspend pausedForMe`); until they play again.
    var pausedForMe = false
    static let pausedForMeReason = "pausedForMe"
    /// The room's state is the paused one that answered the user's pause near
    /// where mpv stopped: until the next state, mpv stays there.
    var userPauseStands = false
    public private(set) var mode = "idle"
    /// More about the mode, in words, for a status line.
    public private(set) var detail = ""

    // During one input: mpv as the actions decided so far leave it.
    var video = MpvReadings()
    var now = PreciseInstant(milliseconds: 0)
    var monotonic = MonotonicInstant(microseconds: 0)
    var out: [Action] = []

    /// `share`: make `localFile` the room's item once joined, under this title
    /// (an empty title: the room's neutral one, size and length).
    public init(localFile: LocalCopy? = nil, share title: String? = nil) {
        self.localFile = localFile
        if localFile != nil, let title { share = .wanted(title: title) }
    }

    public mutating func handle(_ input: Input, readings: MpvReadings, now: PreciseInstant, monotonic: MonotonicInstant) -> [Action] {
        video = readings
        // mpv reports a change of `pause` a moment after it is asked: until then
        // the player's own request is what stands.
        if askedPauseWithinWindow(monotonic) { video.paused = wantPaused }
        if ownSeek { video.seeking = true }
        self.now = now
        self.monotonic = monotonic
        out = []
        // Whatever the input, a pause mpv did not ask for is the user's (a tick
        // may see it before mpv's own word of it arrives).
        noticeUserPause()
        switch input {
        case .connected:
            readySent = nil
            haveSent = nil
            if case .sent(let title) = share { share = .wanted(title: title) }
            durationSent = nil
            stallReadySentAt = nil
            appliedSeq = nil
        case .room(let message):
            receive(message)
        case .mpv(let event):
            mpvEvent(event)
        case .tick:
            if userSeekPending, let landed = ownLandedBeforeUser, monotonic - landed >= Self.userSeekWait {
                // No second restart came: mpv merged the user's seek into the
                // player's own, to the same place.
                ownLandedBeforeUser = nil
                userSeekPending = false
                video.seeking = false
                userChanged("/seek \(Self.seconds(video.position ?? 0))")
            } else {
                reconcile()
            }
        case .wake(let id):
            wake(id)
        }
        let actions = out
        out = []
        return actions
    }

    // MARK: inputs

    mutating func receive(_ event: RoomEvent) {
        switch event {
        case .welcome(let welcome):
            me = welcome.you
            if let ownerKey = welcome.ownerKey {
                // Shown once, as the page and the terminal show it: without it the
                // room would have an owner nobody can be.
                tell("you created this room: your owner key is \(ownerKey) (shown once: keep it)")
                tell("to come back as its owner from any device: cowatch watch <this room's address> --owner \(ownerKey)"
                     + " (or ?owner=\(ownerKey) in the room's address)")
            }
            reconcile()
        case .participant(let member, _):
            guard member.id == me?.id else { return }
            let before = me?.suspensions
            me = member
            if member.suspensions != before {
                // The server hands the state again when the last suspension ends,
                // and that state may need a fresh /ready.
                readySent = nil
                stallReadySentAt = nil
                if !member.suspensions.contains(.stallRecovery) { stall = nil }
            }
            reconcile()
        case .state(let incoming):
            if let appliedSeq, incoming.seq < appliedSeq { return } // stale: crossed a newer one
            setState(incoming)
        case .catchup(let replay):
            guard let group = state?.timeline else { return }
            let until = PreciseInstant(milliseconds: Double(replay.until.milliseconds))
            catchup = (until, Timeline.catchup(from: replay.from.seconds, rate: replay.rate.value, until: until, group: group))
            reconcile()
        case .error(let error):
            if error.command == .watch, case .sent = share {
                share = nil
                reconcile()
            }
            // The user's own pause refused because they may not pause the room:
            // paused just for them, the others watch on.
            if error.code == .forbidden, error.command == .pause, userChange?.pausedAt != nil, me?.joined == true {
                userChange = nil
                pausedForMe = true
                note("the user may not pause the room: /suspend \(Self.pausedForMeReason)")
                send("/suspend \(Self.pausedForMeReason)")
                tell("only hosts may pause this room: paused just for you while the others watch on; play again to go back to the group")
                reconcile()
                return
            }
            // The user's own command refused: the room's state stands.
            if userChange != nil, [.forbidden, .suspended, .notPossible, .noSession, .rateLimited].contains(error.code) {
                userChange = nil
                reconcile()
            }
        // Voice is the page's: the desktop player plays the video alone.
        case .participantLeft, .chat, .notice, .reply, .time, .voice, .voiceTicket, .voiceAnswer:
            return
        }
    }

    mutating func setState(_ incoming: RoomState) {
        let previous = state
        state = incoming
        appliedSeq = incoming.seq
        note("state \(incoming.seq) \(incoming.status.rawValue) pos=\(incoming.position) at=\(Self.lastDigits(incoming.at)) rate=\(incoming.rate)")
        userPauseStands = false
        if let change = userChange, incoming.seq > change.seq {
            if let stopped = change.pausedAt, incoming.status == .paused {
                userPauseStands = abs(stopped - incoming.position) <= Self.userPauseStandsWithin
            }
            userChange = nil
        }
        if previous?.item != incoming.item { endedSent = nil }
        if incoming.status != .playing { stall = nil }
        reconcile()
    }

    mutating func mpvEvent(_ event: MpvEvent) {
        switch event {
        case .fileLoaded:
            reportDuration()
            if suspendedForMedia, mediaError == nil {
                suspendedForMedia = false
                send("/resume coordinatedPlaybackNotPossible")
            }
            reconcile()
        case .seek:
            if ownSeeksUnseen > 0 {
                ownSeeksUnseen -= 1
            } else {
                userSeekPending = true
                userSeekBehindOwn = ownSeek ? seekTarget : nil
            }
        case .playbackRestart:
            // The player's own seek, asked before the user's, landed first: the
            // user's restart comes next, and only it says where the user went.
            if userSeekPending, let ownTarget = userSeekBehindOwn, let position = video.position,
               abs(position - ownTarget) <= holdTolerance + 0.05 {
                userSeekBehindOwn = nil
                ownSeek = false
                ownSeeksUnseen = 0
                ownLandedBeforeUser = monotonic
                return
            }
            userSeekBehindOwn = nil
            ownLandedBeforeUser = nil
            // mpv merges a seek asked while another waits: landing far from
            // the player's own target, it was the user's that won.
            if ownSeek, !userSeekPending, let target = seekTarget, let position = video.position,
               abs(position - target) > holdTolerance + 0.05 {
                userSeekPending = true
            }
            ownSeek = false
            ownSeeksUnseen = 0
            video.seeking = false
            if userSeekPending {
                userSeekPending = false
                userChanged("/seek \(Self.seconds(video.position ?? 0))")
                return
            }
            reconcile()
        case .endFile(let reason):
            if reason == "error" {
                mediaFailed("mpv could not play it")
            } else if reason == "eof" {
                reportEnded()
            }
        case .pauseChanged:
            return // noticeUserPause() has seen it
        }
    }

    /// mpv's `pause` other than the player last asked, not just after asking
    /// (mpv catching up), nor mpv pausing itself on the last frame, is the
    /// user's space bar (or anything else driving mpv): the room is told.
    mutating func noticeUserPause() {
        let paused = video.paused
        guard paused != wantPaused, !askedPauseWithinWindow(monotonic), video.loaded, !video.eofReached,
              !nearEnd else { return }
        wantPaused = paused
        cancelJoin()
        running = nil
        if !paused, pausedForMe || me?.isSuspended(for: Self.pausedForMeReason) == true {
            // Play after pausing just for themselves: back to the group, which
            // hands the room's state again (docs/desktop.md).
            pausedForMe = false
            note("the user plays again: /resume \(Self.pausedForMeReason)")
            send("/resume \(Self.pausedForMeReason)")
            return
        }
        userChanged(paused ? "/pause" : "/play")
    }

    /// mpv at its end pauses itself (keep-open): not the user.
    var nearEnd: Bool {
        guard let duration = video.duration, let position = video.position else { return false }
        return position >= duration - endMargin - 0.5
    }

    mutating func userChanged(_ line: String) {
        guard state != nil, me?.joined == true else { return }
        note("the user in mpv: \(line)")
        send(line)
        userChange = UserChange(seq: state?.seq ?? 0, until: monotonic + Self.userGrace,
                                pausedAt: line == "/pause" ? video.position : nil)
        readySent = nil
    }

    mutating func mediaFailed(_ words: String) {
        mediaError = words
        cancelJoin()
        running = nil
        if !suspendedForMedia, me?.joined == true {
            suspendedForMedia = true
            send("/suspend coordinatedPlaybackNotPossible")
        }
    }

    mutating func reportEnded() {
        guard case .run(let timeline, _) = plan(), !timeline.catchup, let state, endedSent != state.seq else { return }
        endedSent = state.seq
        send("/ended \(state.seq)")
    }

    /// `/duration <seq> <seconds>` once mpv knows the item's length and the room does not.
    mutating func reportDuration() {
        guard let state, let activity = state.joinedActivity, activity.duration == nil, !activity.live, activity.identifier == src,
              durationSent != src, video.loaded, let duration = video.duration, duration > 0, duration.isFinite else { return }
        send("/duration \(state.seq) \(Self.seconds(duration))")
        durationSent = src
    }

    mutating func load(_ activity: Activity) {
        src = activity.identifier
        mediaError = nil
        cancelJoin()
        running = nil
        catchup = nil
        stall = nil
        stallCheck = nil
        pause()
        copy = nil
        if let own = activity.source.ownCopy {
            guard let target = checkCopy(own, activity) else { return }
            loadTarget(target)
        } else if let localFile {
            tell("playing \(localFile.path) in place of the room's link (a link has no identity to check a file against)")
            loadTarget(localFile.path)
        } else if let url = activity.url?.text {
            loadTarget(url)
        }
    }

    /// mpv loads `target`, unless it has it already (a file shared from here).
    mutating func loadTarget(_ target: String) {
        guard target != loadedTarget || !video.loaded else { return }
        loadedTarget = target
        out.append(.load(target))
        video.loaded = false
        video.position = nil
        video.duration = nil
        video.eofReached = false
    }

    // MARK: deciding

    public mutating func plan() -> Plan {
        if let catchup, now >= catchup.until { self.catchup = nil }
        if share?.holdsMpv == true { return .none("sharing") }
        guard let state, let activity = state.joinedActivity, let timeline = state.timeline else { return .none("idle") }
        guard let me, me.joined else { return .none("left") }
        if activity.source.ownCopy != nil, activity.identifier == src {
            switch copy {
            case .has: break
            case .checking: return .none("checking your copy")
            case .refused, nil: return .none("not watching")
            }
        }
        if mediaError != nil { return .none("error") }
        if userSeekPending || (userChange.map { monotonic < $0.until } ?? false) { return .detached("yours", reasons: []) }
        var others = me.suspensions.map(\.rawValue).filter { $0 != "catchup" }
        if pausedForMe, !others.contains(Self.pausedForMeReason) { others.append(Self.pausedForMeReason) }
        if let catchup, others.isEmpty { return .run(catchup.timeline, mode: "catchup") }
        if !others.isEmpty { return .detached("suspended", reasons: others) }
        if stall != nil { return .detached("stalled", reasons: []) }
        if !timeline.playing {
            return .hold(timeline, waitingSeq: state.status == .waiting ? state.seq : nil, mode: state.status.rawValue)
        }
        return .run(timeline, mode: now < timeline.at ? "starting" : "playing")
    }

    mutating func reconcile() {
        if let change = userChange, monotonic >= change.until { userChange = nil }
        shareFile()
        if share?.holdsMpv != true, let activity = state?.joinedActivity, activity.identifier != src { load(activity) }
        checkCopyLength()
        reportCopy()
        if stallCheck != nil { confirmStall() }
        // mpv may tell the length after `file-loaded`.
        if durationSent != src { reportDuration() }
        let plan = plan()
        mode = plan.mode
        detail = ""
        switch plan {
        case .none:
            if case .refused(let why) = copy { detail = why }
            cancelJoin()
            stopVideo()
        case .detached(let mode, let reasons):
            cancelJoin()
            if mode == "yours" { return }
            reportRecovery(stalledAlone: mode == "suspended" && reasons.contains("stallRecovery"))
            if mode == "stalled" || reasons.contains(Self.pausedForMeReason) { stopVideo() }
        case .hold(let timeline, let waitingSeq, _):
            hold(timeline, waitingSeq: waitingSeq)
        case .run(let timeline, _):
            if video.eofReached, !timeline.catchup { reportEnded() }
            run(timeline)
        }
    }

    var holdTolerance: Double { Steadiness.holdTolerance(precision: max(video.precision, video.frame)) }

    mutating func hold(_ timeline: Timeline, waitingSeq: Int64?) {
        cancelJoin()
        stopVideo()
        guard video.loaded, let position = video.position else { return }
        let target = clampToMedia(timeline.position, duration: video.duration)
        // Paused by a pause rather than a seek, mpv shows the frame it was at,
        // most often the one after the position's.
        let otherFrame = video.frameKnown && !userPauseStands && shownFor != timeline
            && !Self.covers(position, target, frame: video.frame)
        if abs(position - target) > (userPauseStands ? Self.userPauseStandsWithin : holdTolerance) || otherFrame {
            if !(video.seeking && seekTarget == target) {
                shownFor = timeline
                seek(target, showing: true)
            }
            return
        }
        guard let waitingSeq else { return }
        guard video.enoughData else {
            detail = "buffering (\(video.seeking ? "seeking" : video.pausedForCache ? "waiting for data" : "\(Self.seconds(video.bufferedAhead ?? 0)) s read ahead"))"
            return
        }
        detail = "ready"
        guard readySent != waitingSeq else { return }
        readySent = waitingSeq
        send("/ready \(waitingSeq)")
    }

    /// Detached after a stall: /ready once mpv has its data again (stall.js).
    mutating func reportRecovery(stalledAlone: Bool) {
        guard stall != nil || stalledAlone, let state, video.loaded, video.enoughData else { return }
        if stall != nil || stallReadySentAt.map({ monotonic - $0 > Stalls.readyRepeat }) ?? true {
            stall = nil
            stallReadySentAt = monotonic
            send("/ready \(state.seq)")
        }
    }

    mutating func confirmStall() {
        guard let check = stallCheck else { return }
        if !video.pausedForCache, let position = video.position, abs(position - check.position) > 0.1 || video.enoughData {
            stallCheck = nil // a hiccup: it plays again
            return
        }
        if monotonic - check.since < Stalls.confirm { return }
        stallCheck = nil
        guard case .run(let timeline, _) = plan(), !timeline.catchup, running != nil else { return }
        stall = check.since
        running = nil
        note("stall confirmed: /buffering")
        send("/buffering")
    }

    mutating func run(_ timeline: Timeline) {
        guard video.loaded, let position = video.position else { return }
        if stallCheck != nil { return }
        if let join {
            if join.key == timeline || sameCourse(join, timeline) { return progressJoin(timeline) }
            cancelJoin()
        }
        if running == nil || video.paused {
            if atEnd(timeline.position(at: max(now, timeline.at)), duration: video.duration) { return }
            return beginJoin(timeline)
        }
        if video.pausedForCache, !timeline.catchup, stall == nil {
            stallCheck = (monotonic, position)
            return
        }
        if let running, running.rate != timeline.rate, !timeline.catchup {
            // mpv would play the new rate only after its queued audio (Steadiness).
            note("rate \(running.rate) → \(timeline.rate): re-join")
            return beginJoin(timeline)
        }
        running = timeline
        let expected = timeline.position(at: now)
        if atEnd(expected, duration: video.duration) { return }
        if verify != nil {
            verifyStart()
            if verify != nil { return }
        }
        let raw = position - expected
        let reading = Steadiness.addReading(drifts, raw, precision: video.precision)
        drifts = reading.readings
        drift = reading.drift
        if Steadiness.needsRejoin(raw: raw, drift: reading.drift, precision: video.precision) {
            note("drift \(Self.ms(reading.drift)) ms: re-join")
            return beginJoin(timeline)
        }
        let next = Steadiness.nudge(nudging: nudging, drift: reading.drift, rate: timeline.rate)
        if next.nudging != nudging { note("nudge \(next.nudging ? "begins" : "ends") at \(Self.ms(reading.drift)) ms") }
        nudging = next.nudging
        setSpeed(next.speed)
    }

    func sameCourse(_ join: Join, _ timeline: Timeline) -> Bool {
        abs(timeline.position(at: join.startAt) - join.position) < 0.0005 && timeline.rate == join.rate
    }

    mutating func beginJoin(_ timeline: Timeline) {
        stopVideo()
        drifts = []
        verify = nil
        let position = video.position ?? 0
        let atPosition = abs(position - timeline.position) <= holdTolerance && !video.seeking
        // Held up to a frame short of the position, mpv is started up to a frame early.
        let frameEarly = PreciseInterval.milliseconds(video.frame / timeline.rate * 1000)
        let coordinated = timeline.at - now > Starts.spin + playLatency + frameEarly + .milliseconds(2) && atPosition
            && video.enoughData
        let startAt = coordinated ? timeline.at : max(timeline.at, now + joinLead)
        joins += 1
        var join = Join(id: joins, key: timeline, startAt: startAt,
                        position: clampToMedia(timeline.position(at: startAt), duration: video.duration), rate: timeline.rate)
        note("join: \(Self.seconds(join.position)) in \(Self.wholeMilliseconds(startAt - now)) ms\(coordinated ? " (coordinated)" : "")")
        setSpeed(timeline.rate)
        if abs(position - join.position) > holdTolerance {
            join.seekBegan = monotonic
            seek(join.position)
        }
        self.join = join
        progressJoin(timeline)
    }

    mutating func progressJoin(_ timeline: Timeline) {
        guard var join, !join.armed else { return }
        let left = join.startAt - now
        if video.seeking || !video.enoughData {
            if left < playLatency + .milliseconds(2) { missedJoin(timeline) }
            return
        }
        if let began = join.seekBegan {
            joinLead = Starts.leadAfterSeek(joinLead, took: PreciseInterval(monotonic - began))
            join.seekBegan = nil
        }
        // mpv plays from the frame its exact seek shows, its sound too, up to a
        // frame from where it was asked to go: it starts when the timeline gets
        // to where it stands, not to where it was sent.
        if let position = video.position, position != join.position, abs(position - join.position) <= holdTolerance {
            join.startAt = join.startAt + .milliseconds((position - join.position) / join.rate * 1000)
            join.position = position
            if join.startAt - now < playLatency + .milliseconds(2) { return missedJoin(timeline) }
        }
        join.armed = true
        self.join = join
        out.append(.wake(join.id, after: max(.zero, join.startAt - playLatency - now - Starts.spin)))
    }

    /// The join can no longer leave at its instant: planned again, with more lead.
    mutating func missedJoin(_ timeline: Timeline) {
        joinLead = Starts.leadAfterMiss(joinLead)
        note("join missed its instant: lead now \(Self.wholeMilliseconds(joinLead)) ms")
        join = nil
        beginJoin(timeline)
    }

    mutating func wake(_ id: Int) {
        guard let join, join.id == id else { return }
        switch Starts.fire(startAt: join.startAt, playLatency: playLatency, now: now) {
        case .replan(let late):
            note("start \(Self.wholeMilliseconds(late)) ms late: plan again")
            joinLead = Starts.leadAfterLateStart(joinLead)
            self.join = nil
            reconcile()
        case .wait(let span):
            out.append(.wake(id, after: span))
        case .play(let at):
            out.append(.play(at: at, speed: join.rate))
            wantPaused = false
            pauseAskedAt = monotonic
            video.paused = false
            video.speed = join.rate
            self.join = nil
            running = join.key
            nudging = false
            verify = Verify(startAt: join.startAt, position: join.position, rate: join.rate,
                            calledAt: monotonic + MonotonicDuration(max(.zero, at - now)))
        }
    }

    /// How late did mpv really leave its position? Only smooth readings tell.
    mutating func verifyStart() {
        guard let verify, monotonic - verify.calledAt >= Starts.verifyAfter else { return }
        self.verify = nil
        guard !video.paused, !video.seeking, let position = video.position, video.precision <= Steadiness.smoothPrecision else { return }
        let actual = now - .milliseconds((position - verify.position) / verify.rate * 1000)
        let error = actual - verify.startAt
        note("started \(Self.wholeMilliseconds(error)) ms after the instant; unpause latency \(Self.wholeMilliseconds(playLatency)) ms")
        playLatency = Starts.latencyAfterStart(playLatency, error: error)
    }

    mutating func stopVideo() {
        stallCheck = nil
        pause()
        running = nil
        nudging = false
    }

    mutating func cancelJoin() {
        guard join != nil else { return }
        out.append(.cancelWake)
        join = nil
    }

    // MARK: actions

    mutating func send(_ line: String) { out.append(.send(line)) }
    mutating func note(_ text: String) { out.append(.note(text)) }
    mutating func tell(_ text: String) { out.append(.tell(text)) }

    mutating func pause() {
        wantPaused = true
        guard !video.paused else { return }
        out.append(.pause)
        pauseAskedAt = monotonic
        video.paused = true
    }

    /// An exact seek to `position`; `showing`: to the frame that covers it, as a
    /// paused `<video>` shows it, rather than mpv's choice of the next one.
    mutating func seek(_ position: Double, showing: Bool = false) {
        seekTarget = position
        ownSeek = true
        ownSeeksUnseen += 1
        out.append(.seek(showing && video.frameKnown ? Self.coveringFrameTarget(position, frame: video.frame) : position))
        video.position = position
        video.seeking = true
    }

    /// mpv's exact seek shows the first frame from `hrSeekSlack` before its
    /// target on (its `hr-seek`), which for a position inside a frame is the
    /// next one; a target less one frame, plus that slack and
    /// `timestampRounding`, lands on the frame whose span holds `position`.
    static func coveringFrameTarget(_ position: Double, frame: Double) -> Double {
        guard frame > hrSeekSlack + 0.001 else { return position }
        return max(0, position - frame + hrSeekSlack + timestampRounding)
    }

    /// Whether the frame at `shown` is the one whose span holds `position`.
    static func covers(_ shown: Double, _ position: Double, frame: Double) -> Bool {
        shown <= position + timestampRounding && position - shown < frame - timestampRounding
    }

    /// How far a frame's timestamp may stand from its place on the frame grid
    /// (a fifth of a ms): a position within this of a frame's start counts as in that frame.
    static let timestampRounding = 0.0002

    /// mpv's exact seek (`hr-seek`) shows no frame more than this before its
    /// target: as measured with mpv 0.35, a target 4.9 ms past a frame shows
    /// that frame, 5.1 ms past it the next.
    static let hrSeekSlack = 0.005

    mutating func setSpeed(_ speed: Double) {
        guard video.speed != speed else { return }
        out.append(.speed(speed))
        video.speed = speed
    }

    /// mpv answered a request of the player's to pause or play within `ownPauseWindow` of `monotonic`.
    func askedPauseWithinWindow(_ monotonic: MonotonicInstant) -> Bool {
        pauseAskedAt.map { monotonic - $0 < Self.ownPauseWindow } ?? false
    }

    /// Beyond this a number is written as it is rather than as a whole one:
    /// `Int` cannot hold it, and a server may send any number.
    static let wholeLimit = 9.0e15

    /// Thousandths, as a command's seconds.
    static func seconds(_ value: Double) -> String {
        guard abs(value * 1000) < wholeLimit else { return "\(value)" }
        let thousandths = (value * 1000).rounded()
        let whole = Int(thousandths / 1000)
        let rest = Int(abs(thousandths.truncatingRemainder(dividingBy: 1000)))
        let padded = String(rest)
        return "\(whole).\(String(repeating: "0", count: 3 - padded.count))\(padded)"
    }

    static func ms(_ seconds: Double) -> String {
        let ms = (seconds * 1000).rounded()
        return abs(ms) < wholeLimit ? String(Int(ms)) : "\(ms)"
    }

    /// Whole milliseconds (toward zero), for the player's history.
    static func wholeMilliseconds(_ span: PreciseInterval) -> String {
        abs(span.milliseconds) < wholeLimit ? String(Int(span.milliseconds)) : "\(span.milliseconds)"
    }

    /// The last five digits of an instant's whole milliseconds: enough to tell
    /// the states of a session apart in the history.
    static func lastDigits(_ instant: PreciseInstant) -> String {
        abs(instant.milliseconds) < wholeLimit ? String(Int(instant.milliseconds) % 100_000) : "\(instant.milliseconds)"
    }
}
