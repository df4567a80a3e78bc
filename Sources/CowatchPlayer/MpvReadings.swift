/// What mpv says about itself, as the interpreter last read it over its JSON IPC
/// (`Sources/cowatch/MpvRunner.swift`): observed properties, and the position
/// asked for with the input (`audio-pts` when the media has audio, else
/// `time-pos`; see `Steadiness`).
public struct MpvReadings: Sendable, Hashable {
    /// A file is loaded (`file-loaded` since the last `loadfile`).
    public var loaded: Bool
    /// Seconds; nil before the media has a position.
    public var position: Double?
    /// How finely `position` moves: 0.001 for `audio-pts`, a frame for `time-pos`.
    public var precision: Double
    /// One frame (1 / `container-fps`), or 0.05 when mpv does not say: how close
    /// an exact seek lands.
    public var frame: Double
    /// mpv said the video's frame rate: `frame` is the video's own (false for
    /// sound alone, and for video mpv gives no rate for).
    public var frameKnown: Bool
    /// mpv's `pause` property (as last asked, until mpv says otherwise).
    public var paused: Bool
    /// mpv's `seeking`.
    public var seeking: Bool
    /// mpv's `paused-for-cache`: playing, it waits for data.
    public var pausedForCache: Bool
    /// `demuxer-cache-duration`: seconds of media read ahead (nil without a cache: a local file).
    public var bufferedAhead: Double?
    /// `demuxer-cache-idle`: the cache has read all it will (up to the end).
    public var cacheIdle: Bool
    /// `duration`, seconds; nil while unknown.
    public var duration: Double?
    /// `eof-reached` (mpv runs with `keep-open`: it stays on the last frame).
    public var eofReached: Bool
    /// mpv's `speed`.
    public var speed: Double

    public init(loaded: Bool = false, position: Double? = nil, precision: Double = 0.001, frame: Double = 0.05,
                frameKnown: Bool = false, paused: Bool = true, seeking: Bool = false, pausedForCache: Bool = false,
                bufferedAhead: Double? = nil, cacheIdle: Bool = false, duration: Double? = nil, eofReached: Bool = false, speed: Double = 1) {
        self.loaded = loaded
        self.position = position
        self.precision = precision
        self.frame = frame
        self.frameKnown = frameKnown
        self.paused = paused
        self.seeking = seeking
        self.pausedForCache = pausedForCache
        self.bufferedAhead = bufferedAhead
        self.cacheIdle = cacheIdle
        self.duration = duration
        self.eofReached = eofReached
        self.speed = speed
    }

    /// Enough data to play from where it stands (readiness.js): loaded, not
    /// seeking nor waiting for data, and a second read ahead (or all there is).
    public var enoughData: Bool {
        guard loaded, position != nil, !seeking, !pausedForCache else { return false }
        guard let bufferedAhead else { return true }
        return bufferedAhead >= 1 || cacheIdle
    }
}
