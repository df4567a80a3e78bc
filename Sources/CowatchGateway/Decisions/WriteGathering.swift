import CowatchTime

/// When the writes events ask for are made. Outside a turn of the event loop,
/// after each event. Within a turn, an event's writes wait for the events
/// ready with it, so that the broadcasts of many rooms whose commands arrived
/// together leave in one flush (shared with the send threads), but the first
/// of them waits no longer than `delay` (`flush-delay`): one slow event in the
/// turn holds them back by at most itself.
package struct WriteGathering: Equatable, Sendable {
    package let delay: MonotonicDuration
    package private(set) var inTurn = false
    /// When the first write still waiting was asked for.
    package private(set) var waitingSince: MonotonicInstant?

    package init(delay: MonotonicDuration) {
        self.delay = delay
    }

    package mutating func turnBegins() {
        inTurn = true
    }

    /// The turn is over: whatever waits is made now.
    package mutating func turnEnds() {
        inTurn = false
    }

    /// A write was asked for while none was waiting.
    package mutating func asked(at now: MonotonicInstant) {
        if waitingSince == nil { waitingSince = now }
    }

    /// Every write waiting was made.
    package mutating func flushed() {
        waitingSince = nil
    }

    /// Whether the writes waiting are made now that an event has been handled.
    /// `now` is read only when a write waits within a turn: most events read no clock here.
    package func flushesAfterEvent(now: @autoclosure () -> MonotonicInstant) -> Bool {
        guard inTurn else { return true }
        guard let waitingSince else { return false }
        return now() - waitingSince >= delay
    }
}
