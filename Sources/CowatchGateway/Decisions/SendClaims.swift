#if canImport(Glibc)
import Glibc
#endif

/// The bookkeeping of one shared flush: the service thread publishes the writes
/// it has prepared, in order, and the send threads (the service thread among
/// them) claim them a few at a time, so that a thread taken off its core holds
/// back only the few it claimed. Kept apart from the threads and the lock that
/// guards it, so that its rules are tested on their own.
package struct SendClaims: Sendable, Equatable {
    /// Writes claimed together: enough that the lock is taken rarely, few enough
    /// that a preempted thread delays little.
    package let chunk: Int
    /// Writes the service thread has made ready: `0..<published`.
    package private(set) var published = 0
    /// Writes taken by some thread: `0..<claimed`.
    package private(set) var claimed = 0
    /// Writes done, in any order.
    package private(set) var completed = 0
    /// No more writes will be published in this flush.
    package private(set) var sealed = false

    package init(chunk: Int) {
        self.chunk = Swift.max(1, chunk)
    }

    /// A new flush: nothing published, nothing claimed.
    package mutating func begin() {
        published = 0
        claimed = 0
        completed = 0
        sealed = false
    }

    /// The first `count` writes are ready. Counts only grow within a flush.
    package mutating func publish(upTo count: Int) {
        guard !sealed else { return }
        published = Swift.max(published, count)
    }

    /// Every write of the flush is published.
    package mutating func seal() {
        sealed = true
    }

    /// The next writes for a thread to make, or nil when none is ready now.
    package mutating func claim() -> Range<Int>? {
        guard claimed < published else { return nil }
        let range = claimed..<Swift.min(published, claimed + chunk)
        claimed = range.upperBound
        return range
    }

    /// A thread has made the writes it claimed.
    package mutating func complete(_ range: Range<Int>) {
        completed += range.count
    }

    /// Sealed, and every write made: the service thread may read the results.
    package var isFinished: Bool { sealed && completed == published }
}

/// What became of one write a send thread made, and what the service thread
/// does about it.
package enum SendOutcome: Equatable, Sendable {
    /// The socket took every byte.
    case whole
    /// The socket took the first `from` bytes (perhaps none): the rest goes
    /// through libwebsockets, which buffers what the socket cannot take yet.
    case rest(from: Int)
    /// The socket failed: the connection is dropped, as a failed write is.
    case failed

    /// `sent` is what send(2) returned, `error` its errno when it returned -1.
    package static func of(sent: Int, error: Int32, length: Int) -> SendOutcome {
        if sent >= length { return .whole }
        if sent >= 0 { return .rest(from: sent) }
        // The socket is full, or the call was interrupted: nothing went, nothing failed.
        if error == EAGAIN || error == EWOULDBLOCK || error == EINTR { return .rest(from: 0) }
        return .failed
    }
}

/// How many send threads a server has when none is configured.
package enum SendThreads {
    /// One less than the cores, so that the service thread keeps one, and at
    /// most 4: a broadcast is a few milliseconds of sends, and past a handful of
    /// threads waking them costs about what another share saves.
    package static func automatic(cores: Int) -> Int {
        Swift.min(4, Swift.max(0, cores - 1))
    }
}
