#if canImport(Glibc)
import Glibc
#endif
import CEpoll
import Foundation

/// The floor under the gateway's fan-out: what one `send()` of a small message
/// costs on this machine over loopback TCP, with nothing else around it.
/// Connected loopback pairs; one thread sends the same buffer N times on the
/// accepted sides (TCP_NODELAY, as libwebsockets sets on the server's
/// connections), another drains the other ends. The figure is the sending
/// thread's CPU time divided by the sends; over loopback it includes the
/// receiving side's TCP input, which the kernel runs in the sender's context.
///
/// Usage: SendFloor [--count N] [--size BYTES] [--connections K] [--per-send MESSAGES]
///   (in release: `commands/bench floor [options]`)
/// --connections spreads the sends round-robin over K pairs, as a broadcast
/// writes once to each member: back-to-back sends on one socket are cheaper,
/// since the kernel merges small writes while the previous one is still queued
/// (tcp_autocorking). --per-send sends that many messages in one send(): what
/// coalescing the frames queued for one connection would cost per message.
///
/// --burst N sends as a room's broadcast does: one message to each of N
/// connections, then nothing for --gap milliseconds (the kernel's and the
/// caches' state goes cold, as between a room's commands), --threads threads
/// sharing each burst's sends in contiguous slices. It reports how long each
/// burst took until the reader had every message (p50, p99) and the senders' CPU
/// per send: the floor for a room that is told something every half second,
/// rather than for a stream of sends.
@main
struct SendFloor {
    struct Options {
        var count = 500_000
        var size = 150
        var perSend = 1
        var connections = 1
        var burst = 0
        var gapMilliseconds = 0
        var threads = 1
    }

    static func main() {
        guard let options = parse(Array(CommandLine.arguments.dropFirst())) else {
            FileHandle.standardError.write(Data("usage: SendFloor [--count N] [--size BYTES] [--connections K] [--per-send MESSAGES] [--burst N [--gap MS] [--threads T]]\n".utf8))
            exit(2)
        }
        do {
            if options.burst > 0 {
                try runBursts(options)
            } else {
                try run(options)
            }
        } catch {
            FileHandle.standardError.write(Data("send floor: \(error)\n".utf8))
            exit(1)
        }
    }

    static func parse(_ arguments: [String]) -> Options? {
        var options = Options()
        var index = 0
        while index < arguments.count {
            guard index + 1 < arguments.count, let value = Int(arguments[index + 1]), value >= 0 else { return nil }
            guard value >= 1 || arguments[index] == "--gap" else { return nil }
            switch arguments[index] {
            case "--burst": options.burst = min(value, 5_000)
            case "--gap": options.gapMilliseconds = min(value, 10_000)
            case "--threads": options.threads = min(value, 64)
            case "--count": options.count = value
            case "--size": options.size = min(value, 1 << 20)
            case "--per-send": options.perSend = min(value, 1_000)
            case "--connections": options.connections = min(value, 5_000)
            default: return nil
            }
            index += 2
        }
        return options
    }

    struct SocketError: Error, CustomStringConvertible {
        var description: String

        init(_ call: String) {
            description = "\(call): \(String(cString: strerror(errno)))"
        }
    }

    static func run(_ options: Options) throws {
        let pairs = try loopbackPairs(options.connections)
        let senders = pairs.map(\.sender)
        let message = Array(repeating: UInt8(ascii: "x"), count: options.size * options.perSend)
        let drain = Drain(sockets: pairs.map(\.receiver))
        let reader = Thread { drain.run() }
        reader.start()

        // A warm-up, so that buffers and caches are in their steady state.
        try send(message, times: min(20_000, options.count), on: senders)
        let cpuBefore = ThreadCPU.now()
        let wallBefore = DispatchTime.now().uptimeNanoseconds
        try send(message, times: options.count, on: senders)
        let cpu = ThreadCPU.now() - cpuBefore
        let wall = Double(DispatchTime.now().uptimeNanoseconds - wallBefore)
        for sender in senders { shutdown(sender, Int32(SHUT_WR)) }
        let readerCPU = drain.finish()
        for sender in senders { close(sender) }

        let sends = Double(options.count)
        let messages = sends * Double(options.perSend)
        let corking = (try? String(contentsOfFile: "/proc/sys/net/ipv4/tcp_autocorking", encoding: .utf8))?
            .trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
        print(String(format: "send floor: %d send() calls of %d bytes (%d message(s) of %d bytes each) over %d loopback TCP connection(s), round-robin; tcp_autocorking %@",
                     options.count, message.count, options.perSend, options.size, options.connections, corking))
        print(String(format: "sender cpu %.3f s (user %.3f, system %.3f): %.0f ns per send(), %.0f ns per message; wall %.0f ns per send()",
                     cpu.total, cpu.user, cpu.system, cpu.total * 1e9 / sends, cpu.total * 1e9 / messages, wall / sends))
        print(String(format: "reader cpu %.3f s: %.0f ns per message (it reads many at once)",
                     readerCPU.total, readerCPU.total * 1e9 / messages))
        print(String(format: "result: workload=send-floor size=%d per_send=%d connections=%d sends=%d ns_per_send=%.0f ns_per_message=%.0f wall_ns_per_send=%.0f reader_ns_per_message=%.0f",
                     options.size, options.perSend, options.connections, options.count, cpu.total * 1e9 / sends,
                     cpu.total * 1e9 / messages, wall / sends, readerCPU.total * 1e9 / messages))
    }

    /// Bursts of one message to each of `burst` connections, `gap` apart, each
    /// timed until the reader has all of it.
    static func runBursts(_ options: Options) throws {
        let pairs = try loopbackPairs(max(options.connections, options.burst))
        let senders = Array(pairs.map(\.sender).prefix(options.burst))
        let message = Array(repeating: UInt8(ascii: "x"), count: options.size)
        let drain = Drain(sockets: pairs.map(\.receiver), counting: true)
        let reader = Thread { drain.run() }
        reader.start()
        let crew = BurstSenders(threads: options.threads, message: message, sockets: senders)
        let bursts = max(1, options.count / options.burst)
        let warmUp = min(5, bursts)
        var completions: [Double] = []
        var cpu = 0.0
        for index in 0..<(warmUp + bursts) {
            if options.gapMilliseconds > 0 { usleep(UInt32(options.gapMilliseconds) * 1000) }
            let expected = drain.received + options.burst * options.size
            let start = DispatchTime.now().uptimeNanoseconds
            let burstCPU = try crew.sendOnce()
            drain.wait(until: expected)
            let took = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e6
            if index >= warmUp {
                completions.append(took)
                cpu += burstCPU
            }
        }
        crew.stop()
        for sender in pairs.map(\.sender) { shutdown(sender, Int32(SHUT_WR)) }
        _ = drain.finish()
        for sender in pairs.map(\.sender) { close(sender) }
        completions.sort()
        let p50 = completions[completions.count / 2]
        let p99 = completions[min(completions.count - 1, completions.count * 99 / 100)]
        let sends = Double(bursts * options.burst)
        print(String(format: "send floor, bursts: %d bursts of one %d-byte message to each of %d loopback TCP connections, %d ms apart, %d sending thread(s)",
                     bursts, options.size, options.burst, options.gapMilliseconds, options.threads))
        print(String(format: "until the reader has the whole burst: p50 %.3f ms, p99 %.3f ms; senders' cpu %.0f ns per send()",
                     p50, p99, cpu * 1e9 / sends))
        print(String(format: "result: workload=send-burst size=%d burst=%d gap_ms=%d threads=%d bursts=%d complete_p50_ms=%.3f complete_p99_ms=%.3f ns_per_send=%.0f",
                     options.size, options.burst, options.gapMilliseconds, options.threads, bursts, p50, p99, cpu * 1e9 / sends))
    }

    /// Sends `message` `times` times, to each socket in turn.
    static func send(_ message: [UInt8], times: Int, on sockets: [Int32]) throws {
        try message.withUnsafeBytes { bytes in
            guard let base = bytes.baseAddress else { return }
            for index in 0..<times {
                let socket = sockets[index % sockets.count]
                var offset = 0
                while offset < bytes.count {
                    let sent = Glibc.send(socket, base + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
                    if sent < 0 {
                        if errno == EINTR { continue }
                        throw SocketError("send")
                    }
                    offset += sent
                }
            }
        }
    }

    /// `count` connections to a listening socket on 127.0.0.1. The accepted end
    /// of each sends, as the server's connections do.
    static func loopbackPairs(_ count: Int) throws -> [(sender: Int32, receiver: Int32)] {
        let listener = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard listener >= 0 else { throw SocketError("socket") }
        defer { close(listener) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { generic in
                bind(listener, generic, length) == 0 && listen(listener, 16) == 0
                    && getsockname(listener, generic, &length) == 0
            }
        }
        guard bound else { throw SocketError("bind") }
        var pairs: [(sender: Int32, receiver: Int32)] = []
        for _ in 0..<count {
            let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard client >= 0 else { throw SocketError("socket") }
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(client, $0, length) == 0 }
            }
            guard connected else { throw SocketError("connect") }
            let accepted = accept(listener, nil, nil)
            guard accepted >= 0 else { throw SocketError("accept") }
            var one: Int32 = 1
            guard setsockopt(accepted, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size)) == 0 else {
                throw SocketError("setsockopt TCP_NODELAY")
            }
            pairs.append((accepted, client))
        }
        return pairs
    }
}

/// A burst's sends, shared by threads in contiguous slices; the calling thread
/// waits for them all.
final class BurstSenders: @unchecked Sendable {
    private let message: [UInt8]
    private let sockets: [Int32]
    private let starts: [DispatchSemaphore]
    private let finished = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    /// Guarded by `lock`: the CPU the threads spent on the current burst, and whether to stop.
    private var cpu = 0.0
    private var failed = false
    private var stopping = false

    init(threads: Int, message: [UInt8], sockets: [Int32]) {
        self.message = message
        self.sockets = sockets
        starts = (0..<threads).map { _ in DispatchSemaphore(value: 0) }
        let share = (sockets.count + threads - 1) / threads
        for index in 0..<threads {
            let slice = min(index * share, sockets.count)..<min((index + 1) * share, sockets.count)
            Thread { [self] in serve(slice, start: starts[index]) }.start()
        }
    }

    /// Sends one burst and returns the sending threads' CPU for it.
    func sendOnce() throws -> Double {
        lock.withLock { cpu = 0 }
        for start in starts { start.signal() }
        for _ in starts { finished.wait() }
        let (spent, failure) = lock.withLock { (cpu, failed) }
        if failure { throw SendFloor.SocketError("send") }
        return spent
    }

    func stop() {
        lock.withLock { stopping = true }
        for start in starts { start.signal() }
    }

    private func serve(_ slice: Range<Int>, start: DispatchSemaphore) {
        while true {
            start.wait()
            if lock.withLock({ stopping }) { return }
            let before = ThreadCPU.now()
            var ok = true
            message.withUnsafeBytes { bytes in
                for socket in sockets[slice] where ok {
                    ok = Glibc.send(socket, bytes.baseAddress, bytes.count, Int32(MSG_NOSIGNAL)) == bytes.count
                }
            }
            let spent = (ThreadCPU.now() - before).total
            lock.withLock {
                cpu += spent
                if !ok { failed = true }
            }
            finished.signal()
        }
    }
}

/// The reading ends: one thread reads whatever is ready (poll) until every
/// sender has shut down, then reports its CPU. It counts the bytes read, for
/// a burst's sender to wait until all of them have arrived.
final class Drain: @unchecked Sendable {
    private var sockets: [pollfd]
    private let done = DispatchSemaphore(value: 0)
    private let arrived = NSCondition()
    /// Guarded by `arrived`.
    private var bytes = 0
    /// Written by the reading thread before `done` is signalled, read after.
    private var cpu = ThreadCPU.Reading(total: 0, user: 0, system: 0)

    /// Whether bytes are counted (a lock per read, which the plain floor's reader
    /// does without), on epoll.
    private let counting: Bool

    init(sockets: [Int32], counting: Bool = false) {
        self.sockets = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        self.counting = counting
    }

    func run() {
        if counting {
            runOnEpoll()
            return
        }
        let start = ThreadCPU.now()
        var open = sockets.count
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while open > 0 {
            let ready = sockets.withUnsafeMutableBufferPointer { poll($0.baseAddress, nfds_t($0.count), -1) }
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            for index in sockets.indices where sockets[index].fd >= 0 && sockets[index].revents != 0 {
                let socket = sockets[index].fd
                let read = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if read == 0 || (read < 0 && errno != EAGAIN && errno != EINTR) {
                    close(socket)
                    // A negative descriptor is skipped by poll().
                    sockets[index].fd = -1
                    open -= 1
                }
            }
        }
        cpu = ThreadCPU.now() - start
        done.signal()
    }

    /// The bursts' reader: epoll, as the load generator's clients read (libev), so
    /// that a wake-up costs what is ready rather than a scan of every socket.
    private func runOnEpoll() {
        let start = ThreadCPU.now()
        let poller = epoll_create1(0)
        for (index, socket) in sockets.enumerated() {
            var event = epoll_event()
            event.events = EPOLLIN.rawValue
            event.data.u64 = UInt64(index)
            _ = epoll_ctl(poller, EPOLL_CTL_ADD, socket.fd, &event)
        }
        var open = sockets.count
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        var events = [epoll_event](repeating: epoll_event(), count: 256)
        while open > 0 {
            let ready = events.withUnsafeMutableBufferPointer { epoll_wait(poller, $0.baseAddress, Int32($0.count), -1) }
            if ready < 0 {
                if errno == EINTR { continue }
                break
            }
            for event in events.prefix(Int(ready)) {
                let index = Int(event.data.u64)
                let socket = sockets[index].fd
                guard socket >= 0 else { continue }
                let read = buffer.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
                if read > 0 {
                    arrived.lock()
                    bytes += read
                    arrived.broadcast()
                    arrived.unlock()
                } else if read == 0 || (errno != EAGAIN && errno != EINTR) {
                    close(socket)
                    sockets[index].fd = -1
                    open -= 1
                }
            }
        }
        close(poller)
        cpu = ThreadCPU.now() - start
        done.signal()
    }

    /// Bytes read so far.
    var received: Int {
        arrived.lock()
        defer { arrived.unlock() }
        return bytes
    }

    /// Returns once `count` bytes have been read in all.
    func wait(until count: Int) {
        arrived.lock()
        while bytes < count { arrived.wait() }
        arrived.unlock()
    }

    /// Waits for the reader to see every end, and returns its CPU time.
    func finish() -> ThreadCPU.Reading {
        done.wait()
        return cpu
    }
}

/// The calling thread's CPU time.
enum ThreadCPU {
    struct Reading {
        var total: Double
        var user: Double
        var system: Double

        static func - (after: Reading, before: Reading) -> Reading {
            Reading(total: after.total - before.total, user: after.user - before.user, system: after.system - before.system)
        }
    }

    /// Total from CLOCK_THREAD_CPUTIME_ID (nanoseconds); the split into user and
    /// system from getrusage(RUSAGE_THREAD) (microseconds).
    static func now() -> Reading {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        var usage = rusage()
        // RUSAGE_THREAD (1) is a GNU extension that Glibc's module does not export.
        getrusage(__rusage_who_t(1), &usage)
        func seconds(_ value: timeval) -> Double { Double(value.tv_sec) + Double(value.tv_usec) / 1_000_000 }
        return Reading(total: Double(time.tv_sec) + Double(time.tv_nsec) / 1e9,
                       user: seconds(usage.ru_utime), system: seconds(usage.ru_stime))
    }
}
