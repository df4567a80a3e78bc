import CowatchCore
@testable import CowatchPlayer
import CowatchTime
import Testing

/// mpv as a room's member (Sources/CowatchPlayer/DesktopPlayer.swift): room
/// events and mpv's readings in, actions out; no mpv, socket or clock.
struct Desk {
    var player = DesktopPlayer()
    var readings = MpvReadings(loaded: true, position: 0, precision: 0.001, frame: 1.0 / 30, frameKnown: true, paused: true,
                               duration: 60)
    var now = PreciseInstant(milliseconds: 1_000_000)
    var monotonic = MonotonicInstant(microseconds: 5_000_000)

    mutating func on(_ input: DesktopPlayer.Input) -> [DesktopPlayer.Action] {
        let actions = player.handle(input, readings: readings, now: now, monotonic: monotonic)
        // mpv does what it is told at once.
        for action in actions {
            switch action {
            case .pause: readings.paused = true
            case .play(_, let speed): readings.paused = false; readings.speed = speed
            case .seek(let to): readings.position = readings.frameKnown ? Self.landing(to, frame: readings.frame) : to
            case .speed(let speed): readings.speed = speed
            case .load: readings.loaded = true; readings.position = 0
            case .unload: readings.loaded = false; readings.position = nil
            default: break
            }
        }
        return actions
    }

    /// Where mpv's exact seek to `target` lands with frames every `frame` from 0:
    /// on the first frame from 5 ms before the target on, its sound too.
    static func landing(_ target: Double, frame: Double) -> Double {
        ((target - DesktopPlayer.hrSeekSlack) / frame - 1e-9).rounded(.up) * frame
    }

    mutating func pass(_ span: PreciseInterval) {
        now = now + span
        monotonic = monotonic + MonotonicDuration(span)
        if !readings.paused, let position = readings.position {
            readings.position = position + readings.speed * span.milliseconds / 1000
        }
    }

    static func state(_ seq: Int, _ status: PlaybackStatus, position: Double = 0,
                      at: PreciseInstant = PreciseInstant(milliseconds: 1_000_000), rate: Double = 1,
                      duration: Double? = 60) -> DesktopPlayer.Input {
        .room(RoomEvents.state(seq, status, activity: RoomEvents.link("http://media/a.mp4", duration: duration), rate: rate,
                               position: position, at: at))
    }

    /// Welcomed as joined member "m1" and given the item, paused at 0.
    mutating func joined() {
        _ = on(.connected)
        _ = on(.room(RoomEvents.welcome("m1")))
        _ = on(Self.state(1, .paused))
    }

    /// A player welcomed into the room as `joined()` leaves it.
    static func inRoom() -> Desk {
        var desk = Desk()
        desk.joined()
        return desk
    }

    /// In the room and playing, as `playingFromTheStart` leaves it.
    static func playing() -> Desk {
        var desk = inRoom()
        desk.playingFromTheStart()
        return desk
    }

    /// The room plays from 0, starting 300 ms from now; the player wakes at that
    /// start and sets mpv going. Returns the start instant.
    @discardableResult
    mutating func playingFromTheStart() -> PreciseInstant {
        let at = now + .milliseconds(300)
        let wake = Self.wake(on(Self.state(3, .playing, position: 0, at: at)))
        pass(wake?.after ?? .zero)
        _ = on(.wake(wake?.id ?? 0))
        return at
    }

    /// The room holds the item paused at `position` (seq 2), and mpv starts the
    /// seek the player asks for: the actions the state gave.
    @discardableResult
    mutating func roomHolds(at position: Double) -> [DesktopPlayer.Action] {
        let actions = on(Self.state(2, .paused, position: position))
        _ = on(.mpv(.seek))
        return actions
    }

    /// The user pauses mpv (space): what the player sends to the room.
    mutating func userPauses() -> [String] {
        readings.paused = true
        return Self.sent(on(.mpv(.pauseChanged(true))))
    }

    /// Playing for 2 s, the user pauses mpv, and the player sends `/pause`: where
    /// mpv stopped.
    static func pausedByUser() -> (desk: Desk, stopped: Double) {
        var desk = playing()
        desk.pass(.milliseconds(2000))
        #expect(desk.userPauses() == ["/pause"])
        return (desk, desk.readings.position ?? 0)
    }

    /// mpv lands at `position` after a seek (its playback restarts there): what
    /// the player sends to the room.
    mutating func lands(at position: Double) -> [String] {
        readings.position = position
        return Self.sent(on(.mpv(.playbackRestart)))
    }

    static func sent(_ actions: [DesktopPlayer.Action]) -> [String] {
        actions.compactMap { if case .send(let line) = $0 { line } else { nil } }
    }

    static func wake(_ actions: [DesktopPlayer.Action]) -> (id: Int, after: PreciseInterval)? {
        for case .wake(let id, let after) in actions { return (id, after) }
        return nil
    }

    /// The exact seek that holds `position` in view: to the frame that covers it.
    static func showing(_ position: Double) -> Double {
        DesktopPlayer.coveringFrameTarget(position, frame: 1.0 / 30)
    }

    static func seeks(_ actions: [DesktopPlayer.Action]) -> [Double] {
        actions.compactMap { if case .seek(let to) = $0 { to } else { nil } }
    }

    static func speed(_ actions: [DesktopPlayer.Action]) -> Double? {
        actions.compactMap { if case .speed(let speed) = $0 { speed } else { nil } }.last
    }
}

@Suite("mpv following the room")
struct DesktopPlayerFollowTests {
    @Test("a new item is loaded in mpv, paused, and its length told to the room once")
    func loadsAndReportsDuration() {
        var desk = Desk()
        desk.readings.loaded = false
        _ = desk.on(.connected)
        _ = desk.on(.room(RoomEvents.welcome("m1")))
        let actions = desk.on(Desk.state(1, .paused, duration: nil))
        #expect(actions.contains(.load("http://media/a.mp4")))
        desk.readings.duration = 42.5
        #expect(Desk.sent(desk.on(.mpv(.fileLoaded))) == ["/duration 1 42.500"])
        #expect(Desk.sent(desk.on(.tick)).isEmpty)
    }

    @Test("a length mpv tells only after the file loaded is reported on the next look")
    func durationAfterLoad() {
        var desk = Desk()
        _ = desk.on(.room(RoomEvents.welcome("m1")))
        _ = desk.on(Desk.state(1, .paused, duration: nil))
        desk.readings.duration = nil
        #expect(Desk.sent(desk.on(.mpv(.fileLoaded))).isEmpty)
        desk.readings.duration = 60
        #expect(Desk.sent(desk.on(.tick)) == ["/duration 1 60.000"])
    }

    @Test("a file given for a link's item is played in its place, and the viewer told it is not checked")
    func fileForALink() {
        var desk = Desk(player: DesktopPlayer(localFile: LocalCopy(path: "/home/me/a.mkv", hash: 1, size: 10)))
        _ = desk.on(.room(RoomEvents.welcome("m1")))
        let actions = desk.on(Desk.state(1, .paused))
        #expect(actions.contains(.load("/home/me/a.mkv")))
        #expect(actions.contains { if case .tell(let words) = $0 { words.contains("in place of the room's link") } else { false } })
    }

    @Test("a paused group's position is held with an exact seek, and a waiting group is told /ready there")
    func holdsAndSaysReady() {
        var desk = Desk.inRoom()
        let seeks = Desk.seeks(desk.on(Desk.state(2, .waiting, position: 12.5)))
        #expect(seeks == [Desk.showing(12.5)])
        _ = desk.on(.mpv(.seek))
        #expect(Desk.sent(desk.on(.mpv(.playbackRestart))) == ["/ready 2"])
        #expect(Desk.sent(desk.on(.tick)).isEmpty)
    }

    @Test("an exact seek that lands on the next frame counts as there: no second seek")
    func frameLanding() {
        var desk = Desk.inRoom()
        _ = desk.on(Desk.state(2, .waiting, position: 10.017))
        desk.readings.position = 10.033333
        desk.readings.precision = 1.0 / 30
        _ = desk.on(.mpv(.seek))
        let actions = desk.on(.mpv(.playbackRestart))
        #expect(Desk.seeks(actions).isEmpty)
        #expect(Desk.sent(actions) == ["/ready 2"])
    }

    @Test("a coordinated start unpauses at the state's instant less the unpause latency")
    func coordinatedStart() {
        var desk = Desk.inRoom()
        let at = desk.now + .milliseconds(300)
        let armed = desk.on(Desk.state(3, .playing, position: 0, at: at))
        let wake = Desk.wake(armed)
        #expect(wake != nil)
        desk.pass(wake?.after ?? .zero)
        let fired = desk.on(.wake(wake?.id ?? 0))
        #expect(fired.contains(.play(at: at - desk.player.playLatency, speed: 1)))
    }

    @Test("a held position shows the frame that covers it, as a paused <video> does, not mpv's next one")
    func holdsTheCoveringFrame() {
        for (position, frame) in [(10.52, 10.5), (10.5, 10.5), (10.533, 10.5), (0.01, 0.0)] {
            var desk = Desk.inRoom()
            desk.roomHolds(at: position)
            #expect(abs((desk.readings.position ?? -1) - frame) < 1e-6, "held at \(position)")
            #expect(Desk.seeks(desk.on(.mpv(.playbackRestart))).isEmpty, "no second seek")
        }
    }

    @Test("the room's pause leaving mpv on the next frame seeks it back to the frame that covers the position, once")
    func pauseShowsTheCoveringFrame() {
        var desk = Desk.playing()
        desk.pass(.milliseconds(2000))
        // The room pauses at 2.02; mpv stopped showing the frame of 2.033.
        _ = desk.on(Desk.state(4, .paused, position: 2.02, at: desk.now))
        desk.readings.position = 2.033333
        _ = desk.on(.mpv(.pauseChanged(true)))
        #expect(Desk.seeks(desk.on(.tick)) == [Desk.showing(2.02)])
        _ = desk.on(.mpv(.seek))
        #expect(abs((desk.readings.position ?? 0) - 2.0) < 1e-6)
        // A file whose frames are not evenly spaced shows a neighbour: left there.
        desk.readings.position = 2.04
        #expect(Desk.seeks(desk.on(.mpv(.playbackRestart))).isEmpty)
        #expect(Desk.seeks(desk.on(.tick)).isEmpty)
    }

    @Test("sound alone (no frame rate from mpv) is held at the position itself")
    func soundAloneHeldExactly() {
        var desk = Desk.inRoom()
        desk.readings.frameKnown = false
        desk.readings.frame = 0.05
        #expect(Desk.seeks(desk.roomHolds(at: 10.52)) == [10.52])
    }

    @Test("a coordinated start from a frame short of the held position leaves that much early, at the instant the timeline reaches it")
    func startFromTheShownFrame() {
        var desk = Desk.inRoom()
        _ = desk.on(Desk.state(2, .waiting, position: 10.52))
        _ = desk.on(.mpv(.seek))
        #expect(Desk.sent(desk.on(.mpv(.playbackRestart))) == ["/ready 2"])
        let at = desk.now + .milliseconds(300)
        let wake = Desk.wake(desk.on(Desk.state(3, .playing, position: 10.52, at: at, rate: 2)))
        desk.pass(wake?.after ?? .zero)
        let fired = desk.on(.wake(wake?.id ?? 0))
        // 20 ms of media short, at rate 2: 10 ms before the instant.
        #expect(fired.contains(.play(at: at - .milliseconds(10) - desk.player.playLatency, speed: 2)))
    }

    @Test("a late joiner seeks ahead of the timeline and starts when the timeline gets there")
    func lateJoin() {
        var desk = Desk.inRoom()
        let anchor = desk.now - .milliseconds(10_000)
        let actions = desk.on(Desk.state(3, .playing, position: 20, at: anchor))
        let target = Desk.seeks(actions).first ?? 0
        #expect(target > 30 && target < 30 + 4)
        let landed = desk.readings.position ?? 0
        _ = desk.on(.mpv(.seek))
        let wake = Desk.wake(desk.on(.mpv(.playbackRestart)))
        #expect(wake != nil)
        desk.pass(wake?.after ?? .zero)
        let fired = desk.on(.wake(wake?.id ?? 0))
        let starts = fired.compactMap { if case .play(let at, _) = $0 { at } else { nil } }
        #expect(starts.count == 1)
        // Where the timeline is when mpv starts moving is where it landed (the
        // frame at or after the target).
        let movesAt = (starts.first ?? PreciseInstant(milliseconds: 0)) + desk.player.playLatency
        #expect(abs(20 + (movesAt - anchor).milliseconds / 1000 - landed) < 0.001)
    }

    @Test("a few ms ahead, mpv plays a little slower until level, then at the room's rate again")
    func nudges() {
        var desk = Desk.inRoom()
        let at = desk.playingFromTheStart()
        desk.pass(.milliseconds(Double(Int((at - desk.now).milliseconds)) + 400))
        desk.readings.position = (desk.readings.position ?? 0) + 0.02 // 20 ms ahead
        var speeds: [Double] = []
        for _ in 0..<4 {
            if let speed = Desk.speed(desk.on(.tick)) { speeds.append(speed) }
            desk.pass(.milliseconds(50))
        }
        #expect((speeds.first ?? 1) < 1)
        #expect((speeds.first ?? 0) >= 0.94)
        for _ in 0..<200 {
            if let speed = Desk.speed(desk.on(.tick)) { speeds.append(speed) }
            desk.pass(.milliseconds(50))
        }
        #expect(speeds.last == 1)
        #expect(abs(desk.player.drift ?? 1) < 0.003)
    }

    @Test("far off (more than a quarter second), mpv re-joins with an exact seek")
    func rejoins() {
        var desk = Desk.playing()
        desk.pass(.milliseconds(1000))
        desk.readings.position = 9 // jumped
        var actions = desk.on(.tick)
        desk.pass(.milliseconds(50))
        actions += desk.on(.tick)
        #expect(actions.contains(.pause))
        #expect(Desk.seeks(actions).count == 1)
    }

    @Test("frame-stepped positions are read by their upper envelope: a steady video at 30 fps is not nudged")
    func frameEnvelope() {
        var readings: [Double] = []
        var drift = 0.0
        // On time: each reading is the last frame's timestamp, 0 to 33 ms behind.
        for tick in 0..<16 {
            let truth = Double(tick) * 0.05
            let frame = (truth * 30).rounded(.down) / 30
            (readings, drift) = Steadiness.addReading(readings, frame - truth, precision: 1.0 / 30)
        }
        #expect(abs(drift) < Steadiness.nudgeStart)
        #expect(Steadiness.nudge(nudging: false, drift: drift, rate: 1).speed == 1)
    }

    @Test("a rate of 1.5 is played as mpv's speed 1.5")
    func rate() {
        var desk = Desk.inRoom()
        let actions = desk.on(Desk.state(3, .playing, position: 0, at: desk.now + .milliseconds(300), rate: 1.5))
        #expect(actions.contains(.speed(1.5)))
    }
}

@Suite("The user at mpv's keys")
struct DesktopPlayerUserTests {
    @Test("the user pressing space in mpv sends /pause, and mpv is left alone until the room answers")
    func userPause() {
        var desk = Desk.playing()
        desk.pass(.milliseconds(2000))
        #expect(desk.userPauses() == ["/pause"])
        desk.pass(.milliseconds(50))
        #expect(!desk.on(.tick).contains { if case .play = $0 { true } else { false } })
        #expect(desk.player.mode == "yours")
    }

    @Test("the room's answer to the user's pause leaves mpv where it stopped, so that the user's next seek is not raced; the start after it is exact")
    func userPauseStands() {
        var (desk, stopped) = Desk.pausedByUser()
        // The room paused a trip later, 40 ms further on.
        desk.pass(.milliseconds(40))
        #expect(Desk.seeks(desk.on(Desk.state(4, .paused, position: stopped + 0.04))).isEmpty)
        desk.pass(.milliseconds(50))
        #expect(Desk.seeks(desk.on(.tick)).isEmpty)
        // A coordinated start from the room's place: mpv goes exactly there first.
        #expect(Desk.seeks(desk.on(Desk.state(5, .waiting, position: stopped + 0.04))) == [Desk.showing(stopped + 0.04)])
    }

    @Test("the room's answer to the user's pause far from where mpv stopped, or another's change after it, is shown exactly")
    func userPauseOverruled() {
        var (desk, stopped) = Desk.pausedByUser()
        let far = stopped + DesktopPlayer.userPauseStandsWithin + 0.1
        #expect(Desk.seeks(desk.on(Desk.state(4, .paused, position: far))) == [Desk.showing(far)])

        var (other, near) = Desk.pausedByUser()
        near += 0.04
        #expect(Desk.seeks(other.on(Desk.state(4, .paused, position: near))).isEmpty)
        #expect(Desk.seeks(other.on(Desk.state(5, .paused, position: 30))) == [Desk.showing(30)])
    }

    @Test("a pause the player did not ask for, seen on a tick before mpv's word of it, is the user's all the same")
    func userPauseOnTick() {
        var desk = Desk.playing()
        desk.pass(.milliseconds(2000))
        desk.readings.paused = true
        #expect(Desk.sent(desk.on(.tick)) == ["/pause"])
        #expect(Desk.sent(desk.on(.mpv(.pauseChanged(true)))).isEmpty)
    }

    @Test("mpv reporting the pause the player itself asked for is not the user's")
    func ownPause() {
        var desk = Desk.inRoom()
        _ = desk.on(Desk.state(2, .paused, position: 3))
        desk.pass(.milliseconds(400))
        #expect(Desk.sent(desk.on(.mpv(.pauseChanged(true)))).isEmpty)
    }

    @Test("the user unpausing a paused room's mpv sends /play")
    func userPlay() {
        var desk = Desk.inRoom()
        desk.pass(.milliseconds(1000))
        desk.readings.paused = false
        #expect(Desk.sent(desk.on(.mpv(.pauseChanged(false)))) == ["/play"])
    }

    @Test("a seek the player did not cause is the user's: /seek to where mpv landed")
    func userSeek() {
        var desk = Desk.inRoom()
        #expect(Desk.sent(desk.on(.mpv(.seek))).isEmpty)
        #expect(desk.lands(at: 42.25) == ["/seek 42.250"])
    }

    @Test("while the user's seek lands, a reading of the new position does not make the player seek back")
    func userSeekNotFought() {
        var desk = Desk.inRoom()
        desk.roomHolds(at: 15)
        _ = desk.on(.mpv(.playbackRestart))
        desk.pass(.milliseconds(1000))
        _ = desk.on(.mpv(.seek))
        desk.readings.position = 42
        #expect(Desk.seeks(desk.on(.tick)).isEmpty)
        #expect(desk.lands(at: 42) == ["/seek 42.000"])
    }

    @Test("the user's seek while the player's own is under way still reaches the room")
    func userSeekDuringOwn() {
        var desk = Desk.inRoom()
        desk.readings.position = 15.5
        #expect(Desk.seeks(desk.roomHolds(at: 15.832)) == [Desk.showing(15.832)])
        _ = desk.on(.mpv(.seek)) // the user's
        #expect(desk.lands(at: 42) == ["/seek 42.000"])
    }

    @Test("the user's seek asked while the player's own is under way, restarted after it: the room hears the user's place, not the player's")
    func userSeekRestartsAfterOwn() {
        var desk = Desk.inRoom()
        desk.readings.position = 15.5
        desk.roomHolds(at: 15.832)
        _ = desk.on(.mpv(.seek)) // the user's, while the player's own is under way
        #expect(desk.lands(at: 15.832).isEmpty, "the player's own seek landing first is not the user's")
        #expect(desk.lands(at: 42) == ["/seek 42.000"])
        #expect(Desk.seeks(desk.on(.tick)).isEmpty, "and mpv is not sought back to the room's old place")
    }

    @Test("the user's seek to where the player's own was going, merged by mpv into one restart, is still reported")
    func userSeekSamePlaceMerged() {
        var desk = Desk.inRoom()
        desk.readings.position = 15.5
        desk.roomHolds(at: 15.832)
        _ = desk.on(.mpv(.seek)) // the user's, to the same place
        #expect(desk.lands(at: 15.832).isEmpty)
        desk.pass(.milliseconds(500))
        #expect(Desk.sent(desk.on(.tick)).isEmpty, "a second restart may still come")
        desk.pass(.milliseconds(600))
        #expect(Desk.sent(desk.on(.tick)) == ["/seek 15.832"])
    }

    @Test("the user's seek merged by mpv into the player's own is known by where mpv lands")
    func userSeekMerged() {
        var desk = Desk.inRoom()
        desk.readings.position = 15.5
        desk.roomHolds(at: 15.832)
        #expect(desk.lands(at: 42) == ["/seek 42.000"])
    }

    @Test("the player's own seeks are not sent to the room")
    func ownSeek() {
        var desk = Desk.inRoom()
        desk.roomHolds(at: 7)
        #expect(!Desk.sent(desk.on(.mpv(.playbackRestart))).contains { $0.hasPrefix("/seek") })
    }

    @Test("the owner key of a room this player created is shown once, in words; a member's welcome shows none")
    func ownerKeyShown() {
        let told = { (actions: [DesktopPlayer.Action]) in actions.compactMap { if case .tell(let words) = $0 { words } else { nil } } }
        var creator = Desk()
        _ = creator.on(.connected)
        let words = told(creator.on(.room(RoomEvents.welcome("m1", ownerKey: "k3y"))))
        #expect(words.count == 2 && words[0].contains("your owner key is k3y") && words[1].contains("--owner k3y"), "\(words)")
        var member = Desk()
        _ = member.on(.connected)
        #expect(told(member.on(.room(RoomEvents.welcome("m2")))).isEmpty)
    }

    @Test("a refused /play leaves the room's course standing: mpv holds again")
    func refused() {
        var desk = Desk.inRoom()
        desk.readings.paused = false
        #expect(Desk.sent(desk.on(.mpv(.pauseChanged(false)))) == ["/play"])
        let actions = desk.on(.room(RoomEvents.error(.forbidden, "only hosts", command: .play)))
        #expect(actions.contains(.pause))
    }

    @Test("a pause the room refuses (only hosts may pause) steps the user out alone; their play takes them back")
    func pausedForMe() {
        var desk = Desk.playing()
        desk.pass(.milliseconds(2000))
        #expect(desk.userPauses() == ["/pause"])
        let refused = desk.on(.room(RoomEvents.error(.forbidden, "only hosts", command: .pause)))
        #expect(Desk.sent(refused) == ["/suspend pausedForMe"])
        #expect(refused.contains { if case .tell(let words) = $0 { words.contains("paused just for you") } else { false } })
        #expect(desk.readings.paused, "mpv stays where the user paused it")
        desk.pass(.milliseconds(3000))
        #expect(Desk.sent(desk.on(.tick)).isEmpty)
        #expect(desk.readings.paused)
        _ = desk.on(.room(RoomEvents.participant("m1", suspensions: ["pausedForMe"])))
        desk.pass(.milliseconds(1000))
        _ = desk.on(.tick)
        #expect(desk.readings.paused, "held while apart")
        // Space again: back to the group, not a /play for everyone.
        desk.readings.paused = false
        #expect(Desk.sent(desk.on(.mpv(.pauseChanged(false)))) == ["/resume pausedForMe"])
        // The room ends it and hands its state again: mpv seeks to the room's place to start along with it.
        let back = desk.on(.room(RoomEvents.participant("m1", suspensions: [])))
            + desk.on(Desk.state(4, .playing, position: 0, at: desk.now - .milliseconds(6000)))
        let target = Desk.seeks(back).last ?? 0
        #expect(target > 5.9 && target < 7, "the room's place is sought: \(Desk.seeks(back))")
    }
}

@Suite("What mpv reports to the room")
struct DesktopPlayerReportTests {
    @Test("a stall that lasts half a second is reported with /buffering, and /ready once the data is back")
    func stall() {
        var desk = Desk.playing()
        desk.pass(.milliseconds(1000))
        _ = desk.on(.tick)
        desk.readings.pausedForCache = true
        desk.readings.bufferedAhead = 0
        desk.pass(.zero)
        _ = desk.on(.tick)
        let frozen = desk.readings.position
        desk.readings.paused = false
        desk.pass(.milliseconds(200))
        desk.readings.position = frozen
        #expect(Desk.sent(desk.on(.tick)).isEmpty)
        desk.pass(.milliseconds(400))
        desk.readings.position = frozen
        #expect(Desk.sent(desk.on(.tick)) == ["/buffering"])
        desk.readings.pausedForCache = false
        desk.readings.bufferedAhead = 5
        desk.pass(.milliseconds(50))
        #expect(Desk.sent(desk.on(.tick)) == ["/ready 3"])
    }

    @Test("the end of the item is told once with the state's seq")
    func ended() {
        var desk = Desk.inRoom()
        _ = desk.on(Desk.state(3, .playing, position: 0, at: desk.now - .milliseconds(59_990)))
        desk.readings.position = 60
        desk.readings.eofReached = true
        #expect(Desk.sent(desk.on(.tick)) == ["/ended 3"])
        #expect(Desk.sent(desk.on(.tick)).isEmpty)
    }

    @Test("media mpv cannot play separates it from the group in words the room knows")
    func mediaError() {
        var desk = Desk.inRoom()
        #expect(Desk.sent(desk.on(.mpv(.endFile(reason: "error")))) == ["/suspend coordinatedPlaybackNotPossible"])
    }

    @Test("a suspended member stands aside: a playing state does not start mpv")
    func suspended() {
        var desk = Desk.inRoom()
        _ = desk.on(.room(RoomEvents.participant("m1", suspensions: ["userActionRequired"])))
        let actions = desk.on(Desk.state(3, .playing, position: 0, at: desk.now + .milliseconds(300)))
        #expect(Desk.wake(actions) == nil)
        #expect(desk.player.mode == "suspended")
    }

    @Test("a catch-up is followed at its own rate and meets the group at its end")
    func catchup() {
        var desk = Desk.inRoom()
        _ = desk.on(Desk.state(3, .playing, position: 40, at: desk.now - .milliseconds(1000)))
        _ = desk.on(.room(RoomEvents.participant("m1", suspensions: ["catchup"])))
        let actions = desk.on(.room(RoomEvents.catchup(from: 30, rate: 2, until: desk.now + .milliseconds(11_000))))
        #expect(actions.contains(.speed(2)))
        #expect(desk.player.mode == "catchup")
    }

    @Test("a state whose instant and position no whole number holds is followed without bringing the player down")
    func wildNumbers() {
        var desk = Desk()
        desk.joined()
        desk.readings.duration = nil // a stream: no end to hold the position to
        let far = desk.on(Desk.state(2, .playing, position: 0, at: PreciseInstant(milliseconds: 1e300), duration: nil))
        #expect(Desk.wake(far) != nil)
        let ahead = desk.on(Desk.state(3, .playing, position: 1e300, at: PreciseInstant(milliseconds: -1e300), duration: nil))
        #expect(Desk.seeks(ahead).count == 1)
        _ = desk.on(.tick)
    }

    @Test("a state older than the one applied is dropped")
    func stale() {
        var desk = Desk.inRoom()
        _ = desk.on(Desk.state(5, .paused, position: 30))
        #expect(Desk.seeks(desk.on(Desk.state(4, .paused, position: 10))).isEmpty)
    }
}

@Suite("The server's clock and the room's events")
struct DesktopPlayerClockTests {
    @Test("the clock offset is the middle of the round trips' intersection")
    func offset() {
        var clock = ServerClock()
        clock.add(sent: ms(1000), server: ms(6010), received: ms(1020))
        clock.add(sent: ms(2000), server: ms(7002), received: ms(2004))
        #expect(clock.offset > .milliseconds(4998) && clock.offset < .milliseconds(5003))
        #expect(clock.uncertainty <= .milliseconds(2.5))
    }

    @Test("samples go in a burst of eight, then every half second for ten seconds, then every two")
    func schedule() {
        #expect(ServerClock.nextSample(startedAt: ms(0), sentCount: 3, lastSent: ms(80)) == ms(120))
        #expect(ServerClock.nextSample(startedAt: ms(0), sentCount: 8, lastSent: ms(280)) == ms(780))
        #expect(ServerClock.nextSample(startedAt: ms(0), sentCount: 30, lastSent: ms(10_280)) == ms(12_280))
    }

    @Test("a round trip longer than ten seconds is not one of ours")
    func slowSample() {
        var clock = ServerClock()
        let added = clock.add(sent: ms(0), server: ms(5), received: ms(10_001))
        #expect(!added)
        #expect(!clock.synced)
    }

    @Test("a catch-up's replay meets the group's timeline exactly at its end")
    func catchupMeets() {
        let group = Timeline(playing: true, position: 100, at: ms(0), rate: 1)
        let replay = Timeline.catchup(from: 90, rate: 2, until: ms(20_000), group: group)
        #expect(abs(replay.position(at: ms(20_000)) - group.position(at: ms(20_000))) < 1e-9)
        #expect(replay.catchup)
    }

    @Test("a state event's timeline and activity are read from the server's JSON")
    func parsesState() throws {
        let text = """
        {"type":"state","seq":7,"session":{"state":"joined","activity":{"id":"a1","url":"http://x/a.mp4","title":"A","identifier":"http://x/a.mp4","source":{"kind":"file"},"live":false,"duration":null,"subtitles":[]}},"playback":{"status":"playing","item":"a1","rate":1.5,"position":12.5,"at":1700000000000,"by":null,"cause":"play"},"queue":[],"policy":{"control":"everyone","stall":"continue","wait":5}}
        """
        guard case .state(let state)? = try JSONEventDecoding.decode(text) else { Issue.record("not a state"); return }
        #expect(state.seq == 7)
        #expect(state.joinedActivity?.url?.text == "http://x/a.mp4")
        #expect(state.joinedActivity?.duration == nil)
        #expect(state.timeline == Timeline(playing: true, position: 12.5, at: ms(1_700_000_000_000), rate: 1.5))
    }

    @Test("a time answer carries the client's value and the server's clock")
    func parsesTime() throws {
        #expect(try JSONEventDecoding.decode(#"{"type":"time","client":123.5,"server":1700000000001}"#)
                == .time(client: 123.5, server: ServerInstant(milliseconds: 1_700_000_000_001)))
    }
}

/// An instant on the server's scale, `milliseconds` after the epoch.
private func ms(_ milliseconds: Double) -> PreciseInstant { PreciseInstant(milliseconds: milliseconds) }
