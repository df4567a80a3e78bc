#if canImport(Glibc)
import Glibc
#endif
import CLibWebSockets
import CowatchConnection
import Foundation

/// Threads that make a big flush's socket writes alongside the service thread.
///
/// Over loopback and on a busy host most of a send's cost is the kernel's TCP
/// path, run in the sender's context (docs/benchmarks.md, "Where a 500-member
/// room's fan-out goes"), so one thread reaches a room's last member only after
/// every member's send in turn. Here the service thread prepares each
/// connection's write (the frames it owes, as pointers into frames that stay
/// alive until the flush ends) and publishes them a few at a time; the crew's
/// threads and the service thread itself claim them and call `sendmsg` on the
/// raw descriptors. Nothing else touches those sockets meanwhile: libwebsockets
/// runs only on the service thread, and it is inside the flush until every write
/// is made. The threads touch descriptors and bytes only, never a libwebsockets
/// handle or a Swift object of the gateway; what a write left unsent goes back
/// to libwebsockets on the service thread (`LWSServer.flushShared`).
final class SendCrew: @unchecked Sendable {
    /// Frames one shared write may carry (a `sendmsg` with that many pieces);
    /// a connection owing more is written by the service thread as before.
    static let maximumPieces = 4

    /// One connection's write: its descriptor, its pieces (at `pieces + index *
    /// maximumPieces`), and what send returned.
    struct Job {
        var socket: Int32 = -1
        var pieceCount = 0
        var length = 0
        var sent = 0
        var error: Int32 = 0
    }

    /// Guards `claims` and `stopping`; its wait is where idle threads sleep and
    /// where the service thread waits for the last claimed writes.
    private let condition = NSCondition()
    private var claims: SendClaims
    private var stopping = false
    private var jobs: UnsafeMutablePointer<Job>
    private var pieces: UnsafeMutablePointer<iovec>
    private(set) var capacity: Int
    private let exited = DispatchSemaphore(value: 0)
    private let threadCount: Int

    var chunk: Int { claims.chunk }

    init(threads: Int, chunk: Int = 8) {
        threadCount = threads
        claims = SendClaims(chunk: chunk)
        capacity = 256
        (jobs, pieces) = Self.buffers(capacity)
        for index in 0..<threads {
            let thread = Thread { [self] in
                cw_name_this_thread("cowatch-send-\(index + 1)")
                work()
            }
            thread.start()
        }
    }

    /// Room for `count` writes; only between flushes, since the threads read the buffers during one.
    func reserve(_ count: Int) {
        guard count > capacity else { return }
        freeBuffers()
        capacity = Swift.max(count, capacity * 2)
        (jobs, pieces) = Self.buffers(capacity)
    }

    private static func buffers(_ capacity: Int) -> (UnsafeMutablePointer<Job>, UnsafeMutablePointer<iovec>) {
        let jobs = UnsafeMutablePointer<Job>.allocate(capacity: capacity)
        jobs.initialize(repeating: Job(), count: capacity)
        let pieces = UnsafeMutablePointer<iovec>.allocate(capacity: capacity * maximumPieces)
        pieces.initialize(repeating: iovec(), count: capacity * maximumPieces)
        return (jobs, pieces)
    }

    private func freeBuffers() {
        jobs.deinitialize(count: capacity)
        jobs.deallocate()
        pieces.deinitialize(count: capacity * Self.maximumPieces)
        pieces.deallocate()
    }

    func begin() {
        condition.lock()
        claims.begin()
        condition.unlock()
    }

    /// Write `index` (below `capacity`, not yet published): `frames`, at most
    /// `maximumPieces` of them, to `socket`. The caller keeps the frames alive
    /// until `finish` returns.
    func prepare(_ index: Int, socket: Int32, frames: [OutboundFrame]) {
        let first = pieces + index * Self.maximumPieces
        var length = 0
        var count = 0
        for frame in frames where count < Self.maximumPieces {
            let framed = frame.framed
            first[count] = iovec(iov_base: UnsafeMutableRawPointer(mutating: framed.baseAddress), iov_len: framed.count)
            length += framed.count
            count += 1
        }
        jobs[index] = Job(socket: socket, pieceCount: count, length: length)
    }

    /// Writes `0..<count` are prepared: the threads may take them.
    func publish(upTo count: Int) {
        condition.lock()
        claims.publish(upTo: count)
        condition.broadcast()
        condition.unlock()
    }

    /// Publishes the last writes, makes writes with the threads until none is
    /// left to claim, and returns once every claimed write is made: with how many
    /// of them the calling thread made.
    @discardableResult
    func finish(upTo count: Int) -> Int {
        var made = 0
        condition.lock()
        claims.publish(upTo: count)
        claims.seal()
        condition.broadcast()
        while true {
            if let sent = sendClaimed() {
                made += sent
            } else if claims.isFinished {
                break
            } else {
                condition.wait()
            }
        }
        condition.unlock()
        return made
    }

    /// What became of write `index`; read after `finish`.
    func outcome(_ index: Int) -> SendOutcome {
        SendOutcome.of(sent: jobs[index].sent, error: jobs[index].error, length: jobs[index].length)
    }

    /// Ends the threads and waits for them; the crew is not used again.
    func stop() {
        condition.lock()
        stopping = true
        condition.broadcast()
        condition.unlock()
        for _ in 0..<threadCount { exited.wait() }
        freeBuffers()
    }

    private func work() {
        condition.lock()
        while true {
            if sendClaimed() != nil {
                // The service thread may be waiting for this last write.
                if claims.isFinished { condition.broadcast() }
            } else if stopping {
                break
            } else {
                condition.wait()
            }
        }
        condition.unlock()
        exited.signal()
    }

    /// With `condition` held: claims the next writes, makes them with the lock
    /// let go, and marks them done; how many, or nil when none was ready.
    private func sendClaimed() -> Int? {
        guard let range = claims.claim() else { return nil }
        condition.unlock()
        send(range)
        condition.lock()
        claims.complete(range)
        return range.count
    }

    private func send(_ range: Range<Int>) {
        let flags = Int32(MSG_NOSIGNAL | MSG_DONTWAIT)
        for index in range {
            var message = msghdr()
            message.msg_iov = pieces + index * Self.maximumPieces
            message.msg_iovlen = jobs[index].pieceCount
            var sent: Int
            repeat {
                sent = sendmsg(jobs[index].socket, &message, flags)
            } while sent < 0 && errno == EINTR
            jobs[index].sent = sent
            jobs[index].error = sent < 0 ? errno : 0
        }
    }
}
