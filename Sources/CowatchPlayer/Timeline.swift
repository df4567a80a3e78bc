import CowatchTime

/// The room's timeline: where the media should be at each server instant, as
/// the page's `static/sync/timeline.js` and `catchup.js` define it. Playing, it
/// moves from `position` at `at` at `rate`; until `at` and while not playing,
/// it holds `position`. Positions are seconds into the media and `rate` media
/// seconds per second: not clock time, so numbers.
public struct Timeline: Sendable, Hashable {
    public var playing: Bool
    public var position: Double
    public var at: PreciseInstant
    public var rate: Double
    /// A catch-up's replay rather than the group's own course.
    public var catchup: Bool

    public init(playing: Bool, position: Double, at: PreciseInstant, rate: Double, catchup: Bool = false) {
        self.playing = playing
        self.position = position
        self.at = at
        self.rate = rate
        self.catchup = catchup
    }

    /// The media position the timeline asks for at server instant `instant`.
    public func position(at instant: PreciseInstant) -> Double {
        guard playing, instant > at else { return position }
        return position + rate * (instant - at).milliseconds / 1000
    }

    /// The catch-up to follow for a `catchup` event: a replay from `from` at
    /// `rate` whose own timeline meets the group's exactly at `until`.
    public static func catchup(from: Double, rate: Double, until: PreciseInstant, group: Timeline) -> Timeline {
        let level = group.position(at: until)
        let start = until - .milliseconds((level - from) / max(rate, 0.01) * 1000)
        return Timeline(playing: true, position: from, at: start, rate: rate, catchup: true)
    }
}

/// Within this of the end there is nothing left to start or correct: the media
/// is let run into its end (timeline.js, END_MARGIN).
let endMargin = 0.05

func atEnd(_ position: Double, duration: Double?) -> Bool {
    guard let duration else { return false }
    return position >= duration - endMargin
}

func clampToMedia(_ position: Double, duration: Double?) -> Double {
    min(max(position, 0), duration ?? .infinity)
}
