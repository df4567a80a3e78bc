import CowatchTime

/// How the desktop player keeps mpv on the room's timeline: the page's rules
/// (`static/sync/drift.js`, `start.js`, `latency.js`, `stall.js`) with the
/// same thresholds, and what mpv's readings call for apart.
///
/// Drift is `position - where the timeline says`, in seconds, positive when
/// mpv is ahead. Beyond `seek` mpv re-joins with a scheduled start (an exact
/// seek, `seek <t> absolute+exact`); smaller drift is absorbed by nudging
/// mpv's `speed`, which takes any value, as the `<video>`'s `playbackRate`.
///
/// mpv's readings and speed differ from the `<video>`'s in ways that matter:
/// - mpv plays a change of speed only after its queued audio (see
///   `nudgeHorizon`): a change of the room's rate is followed with a re-join
///   (an exact seek and a scheduled start), not the `<video>`'s instant change
///   of rate, which here would leave mpv behind by the queue times the change
///   (0.18 s from 1 to 1.5).
/// - mpv puts its pitch-keeping filter in and takes it out as the speed leaves
///   and comes back to exactly 1, and each time the position jumps by 10 to 25
///   ms (measured): the interpreter keeps `scaletempo2` in mpv's audio filters
///   for good, so that a nudge is a smooth change of speed.
/// - `audio-pts` (the position of the audio being played) moves smoothly, to
///   well under a millisecond, like the `<video>`'s `currentTime`: with it the
///   page's median of three readings and thresholds apply as they are.
/// - `time-pos`, all there is for media without audio, is the timestamp of the
///   frame shown: it moves in whole frames (33 ms at 30 fps), so one reading says
///   only that the true position is in `[time-pos, time-pos + frame)`, i.e. the
///   drift is in `(reading, reading + frame]`... read the other way, a reading
///   `p - expected` is at most the true drift and at least a frame below it. The
///   largest reading of the last `frameWindow` (taken at scattered phases of the
///   frame) is then the estimate, within a few ms; a median would sit half a
///   frame low. And an exact seek lands on the first frame at or after the
///   target, so a held position counts as reached within one frame, not 0.1 ms
///   (else it would seek forever).
public enum Steadiness {
    /// Beyond this (seconds), re-join with a scheduled start (`SyncThresholds`, shared with the page).
    public static let seek = SyncThresholds.seek
    /// Nudge when the drift exceeds this; stop once below `nudgeStop` (`SyncThresholds`).
    public static let nudgeStart = SyncThresholds.nudgeStart
    public static let nudgeStop = SyncThresholds.nudgeStop
    /// The nudge absorbs the drift within about this long (proportional)...
    ///
    /// Not the page's 0.3 s: mpv plays a change of `speed` only once the audio
    /// it has already queued for output has played, about 0.37 s later (measured
    /// with `--ao=null`: 0.001 of speed changed the position by 0.4 ms over the
    /// next 0.6 s instead of 0.6 ms; 0.5 by 183 ms instead of 300). A proportional
    /// nudge over a delay that long overshoots unless its horizon is well over
    /// the delay (beyond about e times it: 1 s); 1.5 s keeps it from swinging
    /// while a few ms of drift are still absorbed within seconds.
    public static let nudgeHorizon = PreciseInterval.milliseconds(1500)
    /// ...changing the speed by at most this fraction (6 %, as the page).
    public static let nudgeMax = SyncThresholds.nudgeMax
    /// A held position is reached within this for a smooth reading (`SyncThresholds.hold`).
    public static let hold = SyncThresholds.hold
    /// Readings of a smooth position: the median of this many drives the nudge.
    public static let medianWindow = SyncThresholds.medianWindow
    /// Readings of a frame-stepped position: the largest of this many (at the
    /// player's 50 ms tick: 0.4 s, a dozen frames at 30 fps).
    public static let frameWindow = 8
    /// A reading is smooth when its precision is this or finer (seconds).
    public static let smoothPrecision = 0.002

    /// How close to a held position counts as there, for readings of `precision`.
    public static func holdTolerance(precision: Double) -> Double {
        precision <= smoothPrecision ? hold : precision + 0.001
    }

    /// Adds a raw reading to the recent ones: the readings kept and the drift they say.
    public static func addReading(_ readings: [Double], _ raw: Double, precision: Double) -> (readings: [Double], drift: Double) {
        let smooth = precision <= smoothPrecision
        let recent = Array((readings + [raw]).suffix(smooth ? medianWindow : frameWindow))
        if smooth {
            let sorted = recent.sorted()
            return (recent, sorted[sorted.count / 2])
        }
        return (recent, recent.max() ?? raw)
    }

    /// A re-join only when both the last reading and the estimate say mpv is far
    /// off (a frame-stepped reading may be up to a frame below the drift).
    public static func needsRejoin(raw: Double, drift: Double, precision: Double) -> Bool {
        let slack = precision <= smoothPrecision ? 0 : precision
        return abs(drift) > seek && (raw > seek - slack || raw < -seek)
    }

    /// The speed to play at for `drift` on a timeline moving at `rate`, and whether
    /// a nudge is on (it begins above nudgeStart and ends below nudgeStop).
    ///
    /// The change is the drift over the horizon in media seconds per second
    /// whatever the rate (the page's is a fraction of the rate): at 1.5 the page's
    /// rule corrects half again as fast, which over mpv's delay overshot (measured:
    /// -41, +16, -7 ms).
    public static func nudge(nudging: Bool, drift: Double, rate: Double) -> (nudging: Bool, speed: Double) {
        if abs(drift) < (nudging ? nudgeStop : nudgeStart) { return (false, round(rate)) }
        let change = min(nudgeMax, max(-nudgeMax, drift / (nudgeHorizon.milliseconds / 1000 * max(rate, 0.0625))))
        return (true, round(rate * (1 - change)))
    }

    /// Rounded to 1e-4: no churn on mpv's speed for tiny changes.
    static func round(_ rate: Double) -> Double { (rate * 10_000).rounded() / 10_000 }
}

/// Scheduled starts and what the player learns from them (start.js, latency.js).
public enum Starts {
    /// The last few ms before a scheduled unpause are waited out precisely by the
    /// interpreter (it sleeps to the instant): the timer aims this early.
    public static let spin = PreciseInterval.milliseconds(Double(SyncThresholds.spinMilliseconds))
    /// A start whose timer fires later than this is planned again.
    public static let lateStart = PreciseInterval.milliseconds(Double(SyncThresholds.lateStartMilliseconds))
    /// Unpausing mpv: from `set pause no` to the media moving (learned).
    /// Measured with `--ao=null`: the position moves within a few ms of the unpause.
    public static let playLatencyInitial = PreciseInterval.milliseconds(Double(SyncThresholds.playLatencyMilliseconds.initial))
    public static let playLatencyRange = PreciseInterval.milliseconds(Double(SyncThresholds.playLatencyMilliseconds.min))...PreciseInterval.milliseconds(Double(SyncThresholds.playLatencyMilliseconds.max))
    /// How far ahead a start that must seek first is planned (learned).
    public static let joinLeadInitial = PreciseInterval.milliseconds(Double(SyncThresholds.joinLeadMilliseconds.initial))
    public static let joinLeadRange = PreciseInterval.milliseconds(Double(SyncThresholds.joinLeadMilliseconds.min))...PreciseInterval.milliseconds(Double(SyncThresholds.joinLeadMilliseconds.max))
    public static let latencyGain = 0.4
    /// A start error this large is a hiccup, not the latency of unpausing.
    public static let learnableError = PreciseInterval.milliseconds(60)
    /// A start is measured this long after it (on the monotonic clock).
    public static let verifyAfter = MonotonicDuration.milliseconds(300)

    static func lead(_ lead: PreciseInterval) -> PreciseInterval {
        min(max(lead, joinLeadRange.lowerBound), joinLeadRange.upperBound)
    }
    public static func leadAfterMiss(_ lead: PreciseInterval) -> PreciseInterval { Self.lead(lead * 1.6) }
    public static func leadAfterLateStart(_ lead: PreciseInterval) -> PreciseInterval { Self.lead(lead * 1.3) }
    /// The lead learned from a seek that `took` (twice it, and a margin, weighed in).
    public static func leadAfterSeek(_ lead: PreciseInterval, took: PreciseInterval) -> PreciseInterval {
        Self.lead(lead * 0.7 + (took * 2 + .milliseconds(150)) * 0.3)
    }

    /// The latency corrected by a start's error (late: unpause earlier).
    public static func latencyAfterStart(_ latency: PreciseInterval, error: PreciseInterval) -> PreciseInterval {
        guard abs(error.milliseconds) < learnableError.milliseconds else { return latency }
        return min(max(latency + error * latencyGain, playLatencyRange.lowerBound), playLatencyRange.upperBound)
    }

    public enum Fire: Sendable, Hashable {
        case replan(late: PreciseInterval)
        case wait(PreciseInterval)
        /// Unpause at server time `at` (the interpreter sleeps up to it).
        case play(at: PreciseInstant)
    }

    /// What to do when a start's timer fires at server time `now`.
    public static func fire(startAt: PreciseInstant, playLatency: PreciseInterval, now: PreciseInstant) -> Fire {
        let at = startAt - playLatency
        let late = now - at
        if late > lateStart { return .replan(late: late) }
        if -late > spin + .milliseconds(4) { return .wait(-late - spin) }
        return .play(at: at)
    }
}

/// Stalls (stall.js): mpv says it waits for data with `paused-for-cache`; a
/// stall is reported only when it lasts.
public enum Stalls {
    public static let confirm = MonotonicDuration.milliseconds(Int64(SyncThresholds.stallConfirmMilliseconds))
    /// While a stallRecovery suspension lasts, /ready is said again this often.
    public static let readyRepeat = MonotonicDuration.milliseconds(Int64(SyncThresholds.readyRepeatMilliseconds))
}
