#if canImport(Glibc)
import Glibc
#endif
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
@main
struct SendFloor {
    struct Options {
        var count = 500_000
        var size = 150
        var perSend = 1
        var connections = 1
    }

    static func main() {
        guard let options = parse(Array(CommandLine.arguments.dropFirst())) else {
            FileHandle.standardError.write(Data("usage: SendFloor [--count N] [--size BYTES] [--connections K] [--per-send MESSAGES]\n".utf8))
            exit(2)
        }
        do {
            try run(options)
        } catch {
            FileHandle.standardError.write(Data("send floor: \(error)\n".utf8))
            exit(1)
        }
    }

    static func parse(_ arguments: [String]) -> Options? {
        var options = Options()
        var index = 0
        while index < arguments.count {
            guard index + 1 < arguments.count, let value = Int(arguments[index + 1]), value >= 1 else { return nil }
            switch arguments[index] {
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

/// The reading ends: one thread reads whatever is ready (poll) until every
/// sender has shut down, then reports its CPU.
final class Drain: @unchecked Sendable {
    private var sockets: [pollfd]
    private let done = DispatchSemaphore(value: 0)
    /// Written by the reading thread before `done` is signalled, read after.
    private var cpu = ThreadCPU.Reading(total: 0, user: 0, system: 0)

    init(sockets: [Int32]) {
        self.sockets = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
    }

    func run() {
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
