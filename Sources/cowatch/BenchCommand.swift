#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import CowatchClient
import Foundation

/// `cowatch bench`: a load generator against a running server. Each room gets
/// members m0, m1, ...; m0 sends a command and, once every member of the room
/// has the resulting `state`, the next one (a closed loop per room; rooms run
/// concurrently). Reports latency percentiles, state deliveries per second and
/// the server's memory per connection.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load-test a running server: rooms of members, a controller issuing commands, latency to the last member.",
        discussion: """
        Run the server with limits that let the load in, for example:
          cowatch serve --port 7480 --max-connections-per-address 100000 --max-members 2000 \\
            --max-rooms 100000 --commands-per-second 1000 --command-burst 1000
          cowatch bench --url ws://127.0.0.1:7480 --rooms 1 --members 1000 --rounds 300 --server-pid <pid>
        commands/bench gateway [options] does both.
        """
    )

    @Option(help: "The server, ws://HOST:PORT (rooms are /rooms/<prefix><n>).")
    var url: String

    @Option(help: "Rooms, each with its own controller.")
    var rooms = 1

    @Option(help: "Members per room, named m0, m1, ...; m0 is the controller.")
    var members = 10

    @Option(help: "Measured commands per room (/play, /pause, /seek +5 in turn, after one /watch).")
    var rounds = 100

    @Option(help: "Commands per room before measuring.")
    var warmupRounds = 3

    @Flag(help: "Only open the connections and hold them (memory per connection).")
    var idle = false

    @Option(help: "Seconds to hold the connections in --idle mode.")
    var hold = 2.0

    @Option(help: "Subprotocol: json or text.")
    var encoding = "json"

    @Option(help: "Connections per client context (each context has its own service thread); 0 puts all on one.")
    var connectionsPerClientContext = 0

    @Option(help: "Connections being opened at once.")
    var connectWindow = 64

    @Option(help: "New connections per second at most (0: no limit). Each arrival is announced to its whole room.")
    var connectRate = 0.0

    @Option(help: "The server's process id, to read its resident memory (VmRSS) from /proc.")
    var serverPid: Int32?

    @Option(help: "Seconds of silence that count as settled after connecting and after /watch.")
    var settle = 0.5

    @Option(help: "Seconds the whole run may take.")
    var timeout = 300.0

    @Option(help: "Prefix of the room names (default: bench-<random>-).")
    var roomPrefix: String?

    func validate() throws {
        guard let address = WebSocketAddress(url) else { throw ValidationError("expected ws://HOST:PORT, got \(url)") }
        guard address.path == "/" || address.path.isEmpty else {
            throw ValidationError("give the server only, ws://HOST:PORT; rooms are chosen by the bench")
        }
        guard rooms >= 1, members >= 1 else { throw ValidationError("--rooms and --members must be at least 1") }
        guard rounds >= 1, warmupRounds >= 0 else { throw ValidationError("--rounds must be at least 1, --warmup-rounds at least 0") }
        guard ClientEncoding.named(encoding) != nil else { throw ValidationError("--encoding is json or text") }
        guard connectionsPerClientContext >= 0, connectWindow >= 1, connectRate >= 0 else {
            throw ValidationError("--connections-per-client-context must be 0 or more, --connect-window at least 1")
        }
        guard timeout > 0, settle >= 0, hold >= 0 else { throw ValidationError("times must be positive") }
        if let roomPrefix {
            guard roomPrefix.count + String(rooms).count <= 64,
                  roomPrefix.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || "._-".unicodeScalars.contains($0)) })
            else { throw ValidationError("--room-prefix: A-Z a-z 0-9 . _ - only, room names at most 64 characters") }
        }
    }

    func run() throws {
        guard let server = WebSocketAddress(url), let encoding = ClientEncoding.named(encoding) else {
            throw ExitCode.validationFailure
        }
        let deadline = Date().addingTimeInterval(timeout)
        func remaining() -> Double { max(0.1, deadline.timeIntervalSinceNow) }

        let connections = rooms * members
        let perContext = connectionsPerClientContext == 0 ? connections : connectionsPerClientContext
        // One descriptor per connection, plus stdio and each context's wake-up pipe.
        let contexts = (connections + perContext - 1) / perContext
        let needed = rlim_t(connections + 16 + 4 * contexts)
        let limit = FileLimit.raise(toAtLeast: needed)
        guard limit >= needed else {
            Output.error("bench: \(connections) connections need \(needed) file descriptors; the limit is \(limit) "
                + "and this process may not raise it (the hard limit needs CAP_SYS_RESOURCE to raise)")
            throw ExitCode.failure
        }
        let prefix = roomPrefix ?? "bench-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))-"
        let plan = LoadPlan(server: server, rooms: rooms, members: members, rounds: rounds, warmupRounds: warmupRounds,
                            encoding: encoding, connectionsPerContext: perContext, connectWindow: connectWindow, connectRate: connectRate,
                            roomPrefix: prefix)
        Output.line("bench: \(rooms) room(s) x \(members) member(s) = \(connections) connections, \(encoding.short), "
            + "\(plan.contexts) client context(s), \(idle ? "idle" : "\(rounds) rounds per room (+\(warmupRounds) warm-up)")")

        let rssBefore = serverPid.flatMap(ProcessStats.residentKiB)
        let generator = try LoadGenerator(plan: plan)
        var failed = false
        defer {
            if !generator.closeAll(timeout: min(30, remaining())) {
                Output.error("bench: connections did not all close in time")
            }
        }

        // Controllers first, and the session started before the other members
        // arrive: they join it on connect, one announcement each, where a /watch
        // after them would announce every member to every member once more.
        let first = idle ? 0..<members : 0..<1
        guard var connectSeconds = generator.open(members: first, timeout: remaining()) else {
            throw connectFailure(generator, connections: connections)
        }
        if !idle {
            guard generator.startSessions(timeout: remaining()) else {
                Output.error("bench: /watch did not reach every controller in time")
                throw ExitCode.failure
            }
            guard let seconds = generator.open(members: 1..<members, timeout: remaining()) else {
                throw connectFailure(generator, connections: connections)
            }
            connectSeconds += seconds
        }
        Output.line(String(format: "connect: %d connections welcomed in %.2f s (%.0f per second)",
                           connections, connectSeconds, Double(connections) / max(connectSeconds, 1e-9)))
        if !generator.waitUntilQuiet(quiet: settle, timeout: remaining()) {
            Output.error("bench: the arrival announcements did not settle in time")
            failed = true
        }
        reportMemory(before: rssBefore, connections: connections)

        let passed = idle
            ? holdIdle(generator, connections: connections, seconds: min(hold, remaining()))
            : measureRounds(generator, timeout: remaining())
        if !passed { failed = true }
        if failed { throw ExitCode.failure }
    }

    /// Holds the open connections and reports what the server spent meanwhile.
    private func holdIdle(_ generator: LoadGenerator, connections: Int, seconds: Double) -> Bool {
        let cpuBefore = serverPid.flatMap(ProcessStats.cpuSeconds)
        let holdStart = Date()
        Thread.sleep(forTimeInterval: seconds)
        let held = Date().timeIntervalSince(holdStart)
        let progress = generator.snapshot
        guard progress.failed == 0 else {
            Output.error("bench: \(progress.failed) connection(s) dropped while idle: \(progress.firstFailure ?? "")")
            return false
        }
        var line = String(format: "idle: %d connections held for %.1f s", connections, held)
        if let after = serverPid.flatMap(ProcessStats.cpuSeconds), let cpuBefore {
            line += String(format: "; server cpu meanwhile %.2f s (%.0f%% of one core)", after - cpuBefore,
                           100 * (after - cpuBefore) / max(held, 1e-9))
        }
        if let rss = serverPid.flatMap(ProcessStats.residentKiB) { line += ", rss \(rss) KiB" }
        Output.line(line)
        return true
    }

    /// Runs the rounds and prints latency, throughput and CPU figures.
    private func measureRounds(_ generator: LoadGenerator, timeout: Double) -> Bool {
        let serverCPUBefore = serverPid.flatMap(ProcessStats.cpuSeconds)
        let ownCPUBefore = ProcessStats.ownCPUSeconds()
        let results = generator.runRounds(timeout: timeout)
        let serverCPU = serverPid.flatMap(ProcessStats.cpuSeconds).flatMap { after in serverCPUBefore.map { after - $0 } }
        let ownCPU = ProcessStats.ownCPUSeconds() - ownCPUBefore

        let measured = results.latencies.count
        Output.line(String(format: "latency ms (command to the last member's state, %d commands): p50 %.3f  p90 %.3f  p99 %.3f  max %.3f",
                           measured, results.percentile(0.5), results.percentile(0.9), results.percentile(0.99),
                           results.percentile(1)))
        let seconds = max(results.seconds, 1e-9)
        Output.line(String(format: "throughput: %d state deliveries in %.3f s = %.0f per second (all frames: %.0f per second); %.0f commands per second",
                           results.stateDeliveries, results.seconds, Double(results.stateDeliveries) / seconds,
                           Double(results.frames) / seconds, Double(measured) / seconds))
        let deliveries = Double(max(1, results.stateDeliveries))
        var cpu = String(format: "cpu during rounds: bench %.2f s (%.1f us per state delivery)", ownCPU, ownCPU / deliveries * 1e6)
        if let serverCPU {
            cpu += String(format: ", server %.2f s (%.0f%% of one core, %.1f us per state delivery)",
                          serverCPU, 100 * serverCPU / seconds, serverCPU / deliveries * 1e6)
        }
        Output.line(cpu)
        guard results.completed else {
            let progress = generator.snapshot
            Output.error("bench: incomplete: \(measured) of \(rooms * rounds) commands measured, \(progress.roomsFinished) of \(rooms) rooms finished"
                + (progress.failed > 0 ? ", \(progress.failed) connection(s) failed: \(progress.firstFailure ?? "")" : ""))
            return false
        }
        return true
    }

    private func connectFailure(_ generator: LoadGenerator, connections: Int) -> ExitCode {
        let progress = generator.snapshot
        Output.error("bench: only \(progress.welcomed) of \(connections) members welcomed (\(progress.opened) open, "
            + "\(progress.failed) failed\(progress.firstFailure.map { ": " + $0 } ?? ""))")
        return ExitCode.failure
    }

    private func reportMemory(before: Int?, connections: Int) {
        guard let serverPid else { return }
        guard let before, let after = ProcessStats.residentKiB(serverPid) else {
            Output.error("bench: could not read /proc/\(serverPid)/status")
            return
        }
        Output.line(String(format: "server rss: %d KiB before, %d KiB with %d connections: %.2f KiB per connection",
                           before, after, connections, Double(after - before) / Double(connections)))
    }
}

extension ClientEncoding {
    static func named(_ name: String) -> ClientEncoding? {
        switch name {
        case "json": .json
        case "text": .text
        default: nil
        }
    }

    var short: String { self == .json ? "json" : "text" }
}

/// The bench holds one descriptor per connection; the default soft limit of
/// 1,024 is far too low. Raised before any client context exists, since
/// libwebsockets sizes its tables from the limit when a context is created.
enum FileLimit {
    /// Raises the soft limit to the hard limit, and past it when allowed (root);
    /// returns the soft limit in force afterwards.
    static func raise(toAtLeast wanted: rlim_t) -> rlim_t {
        let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
        var limit = rlimit()
        guard getrlimit(resource, &limit) == 0 else { return 0 }
        if limit.rlim_max < wanted {
            var raised = rlimit(rlim_cur: wanted, rlim_max: wanted)
            if setrlimit(resource, &raised) == 0 { return wanted }
        }
        var raised = rlimit(rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max)
        if setrlimit(resource, &raised) == 0 { return limit.rlim_max }
        return limit.rlim_cur
    }
}

/// What /proc tells about a process.
enum ProcessStats {
    /// VmRSS of the process, in KiB.
    static func residentKiB(_ pid: Int32) -> Int? {
        guard let status = try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8) else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first.flatMap { Int($0) }
        }
        return nil
    }

    /// User plus system CPU time of the process, in seconds.
    static func cpuSeconds(_ pid: Int32) -> Double? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return nil }
        // After the command name: state is field 3; utime and stime are 14 and 15.
        let fields = stat[stat.index(after: end)...].split(separator: " ")
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
