/// The thresholds of keeping a player in sync that the page and the desktop
/// player share, declared once. The page's copy,
/// `Sources/CowatchWeb/Web/static/sync/thresholds.js`, is written from these
/// (`javaScript`), and Tests/CowatchPlayerTests/SyncThresholdsTests.swift holds
/// the file to them. Where a player differs (mpv's nudge horizon, the page's
/// learnable error), it says why beside its own value (`Steadiness`, latency.js).
public enum SyncThresholds {
    /// One threshold: its name in the page's module, its value, and what it means.
    public struct Threshold: Sendable {
        public let name: String
        public let value: String
        public let meaning: String
    }

    /// Beyond this drift (seconds), re-join with a scheduled start (a seek). A
    /// nudge of at most `nudgeMax` would take more than about four seconds to absorb more.
    public static let seek = 0.25
    /// Nudge when the median drift of the last readings exceeds this (seconds).
    /// Chrome reports currentTime to 0.1 ms, mpv's audio-pts as finely, and the
    /// clock estimate is good to about half a ms, so 3 ms is well above the noise
    /// and small enough that players stay within a few ms of each other.
    public static let nudgeStart = 0.003
    /// A nudge ends (rate exact again) once the drift is below this (seconds).
    public static let nudgeStop = 0.001
    /// A nudge changes the rate by at most this fraction (6 %: 0.25 s of drift is
    /// absorbed in about 4.5 s; the browser and mpv keep the pitch).
    public static let nudgeMax = 0.06
    /// A held (paused, waiting) player farther than this (seconds) from the
    /// position seeks (an exact seek lands on the requested time).
    public static let hold = 0.0001
    /// The median of this many drift readings drives the nudge (robust to one odd reading).
    public static let medianWindow = 3
    /// The last few ms before a scheduled start are waited out precisely: the timer aims this early.
    public static let spinMilliseconds = 10
    /// A scheduled start that fires later than this (a busy thread) is planned
    /// again; a smaller delay is left to the drift correction.
    public static let lateStartMilliseconds = 100
    /// The learned latency of starting to play, in ms: where it starts and its bounds.
    /// The cap is high enough for a clip with sound: there the video's clock is
    /// the audio's, which starts moving 65 to 100 ms after play() in headless Chromium.
    public static let playLatencyMilliseconds = (initial: 5, min: 0, max: 150)
    /// How far ahead a start that must seek first is planned, in ms (learned): where it starts and its bounds.
    public static let joinLeadMilliseconds = (initial: 350, min: 200, max: 4000)
    /// A player waiting for data is a stall worth reporting only when it is still stuck this long after.
    public static let stallConfirmMilliseconds = 500
    /// While a stallRecovery suspension lasts, /ready is said again this often: a
    /// report can be lost to a reconnect, or answer a state a newer one replaced.
    public static let readyRepeatMilliseconds = 3000

    /// Every threshold, as the page's module names and writes it.
    public static var all: [Threshold] {
        func range(_ value: (initial: Int, min: Int, max: Int)) -> String {
            "Object.freeze({ initial: \(value.initial), min: \(value.min), max: \(value.max) })"
        }
        return [
            Threshold(name: "SHARED_THRESHOLDS", value: """
                Object.freeze({ seek: \(seek), nudgeStart: \(nudgeStart), nudgeStop: \(nudgeStop), nudgeMax: \(nudgeMax), \
                hold: \(hold) })
                """, meaning: "seek, nudgeStart, nudgeStop, nudgeMax, hold: see drift.js's THRESHOLDS, which adds the page's nudgeHorizon"),
            Threshold(name: "DRIFT_WINDOW", value: "\(medianWindow)",
                      meaning: "The median of this many drift readings drives the nudge (robust to one odd reading)."),
            Threshold(name: "SPIN_MS", value: "\(spinMilliseconds)",
                      meaning: "The last few ms before a scheduled play() are waited out by spinning: setTimeout alone fires a few ms early or late."),
            Threshold(name: "LATE_START_MS", value: "\(lateStartMilliseconds)",
                      meaning: "A scheduled start that fires later than this (a busy main thread) is planned again; a smaller delay is left to the drift correction."),
            Threshold(name: "PLAY_LATENCY_MS", value: range(playLatencyMilliseconds),
                      meaning: "Learned bounds of the latency of play(), ms. The cap is high enough for a clip with sound (docs/benchmarks.md)."),
            Threshold(name: "JOIN_LEAD_MS", value: range(joinLeadMilliseconds),
                      meaning: "How far ahead a start that must seek first is planned, ms (learned)."),
            Threshold(name: "STALL_CONFIRM_MS", value: "\(stallConfirmMilliseconds)",
                      meaning: "A `waiting` is a stall worth reporting only when the video is still stuck this long after it."),
            Threshold(name: "READY_REPEAT_MS", value: "\(readyRepeatMilliseconds)",
                      meaning: "While a stallRecovery suspension lasts, /ready is said again this often."),
        ]
    }

    /// The page's module of these thresholds.
    public static var javaScript: String {
        var lines = [
            "// The sync thresholds the page shares with the desktop player (cowatch watch).",
            "// Written from Sources/CowatchPlayer/SyncThresholds.swift, their one declaration;",
            "// Tests/CowatchPlayerTests/SyncThresholdsTests.swift holds this file to it.",
            "// Change them there, and write this file again from `SyncThresholds.javaScript`.",
        ]
        for threshold in all {
            lines += ["", "/** \(threshold.meaning) */", "export const \(threshold.name) = \(threshold.value);"]
        }
        return lines.joined(separator: "\n") + "\n"
    }
}
