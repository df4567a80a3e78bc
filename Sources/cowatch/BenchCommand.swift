#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import CowatchClient
import CowatchLoad
import CowatchTime
import Foundation

/// `cowatch bench`: a load generator against a running server. Each room gets
/// members m0, m1, ...; m0, the controller, sends commands, and every member's
/// receipt of each resulting `state` is timed. Reports latency percentiles (to
/// each member and to the last member of the room), state deliveries per second,
/// the CPU of the server and of the bench per delivery, and the server's memory.
struct BenchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "bench",
        abstract: "Load-test a running server: rooms of members, controllers issuing commands, latency to every member.",
        discussion: """
        Run the server with limits that let the load in, for example:
          cowatch serve --port 7480 --max-connections-per-address 100000 \\
            --max-members 2000 --max-rooms 100000 --commands-per-second 1000 \\
            --command-burst 1000
          cowatch bench --url ws://127.0.0.1:7480 --rooms 1 --members 1000 \\
            --rounds 300 --server-pid <pid>
        commands/bench gateway [options] does both; commands/bench fanout runs
        the workloads below one after another.

        A cluster: --url takes the nodes' addresses, comma-separated. Member i of
        each room connects to node i mod count, so member 0, the room's first
        (it creates the room, and its node owns it) and its controller, to the
        first node; members on the others are relayed to it. The report adds the
        latencies of the members on the first node and on the others apart.
        With --placement by-room every member of room r connects to node r mod
        count instead, as the shipped nginx upstream places them: each room is
        owned where all its members are (one node per core on one machine).
        --server-pid takes the nodes' process ids, comma-separated (CPU and
        memory summed, and given per process); --database-pid the PostgreSQL
        server's (its CPU and its children's, the sessions of the nodes).
        commands/bench cluster --nodes 1|3 [options] starts them all.

        Schedules (--schedule):
          closed    each controller sends /play, /pause, /seek +5 in turn, the
                    next when every member of its room has the previous state
          together  every controller sends /play and /pause alternately every
                    --interval seconds (default 0.5), all at the same instant,
                    whether or not the previous state has arrived (open loop)
          spread    the same, each room at its own instant: room i sends
                    i/rooms of an interval after room 0 (default interval 1 s)

        Workloads:
          one big synchronized room
            --rooms 1 --members 500 --schedule together --rounds 40
          many rooms at the same instant
            --rooms 100 --members 10 --schedule together --rounds 40
          the closed loop
            --rooms 1 --members 1000 --rounds 500
          commands spread out in time (one client context per room)
            --rooms 400 --members 20 --schedule spread --duration 20 \\
              --connections-per-client-context 20
          a start in a room of 500 players (waiting, every /ready, playing)
            --rooms 1 --members 500 --players --rounds 60
          the same deliveries among 8,000 connections
            --rooms 10 --members 20 --schedule spread --duration 20 \\
              --connections-per-client-context 20 --idle-connections 7800 \\
              --idle-connections-per-client-context 500

        Each `state` that results from a measured command is one delivery and
        one latency sample, from the command's sending to that member's
        receipt. CPU covers the measured phase (after the warm-up): the
        server's utime+stime from /proc/PID/stat (clock ticks, usually 10 ms),
        the bench's own from getrusage. The last line, `result: ...`, repeats
        the figures as key=value pairs.
        """
    )

    enum Schedule: String, ExpressibleByArgument, CaseIterable {
        case closed, together, spread
    }

    @Option(help: "The server, ws://HOST:PORT (rooms are /rooms/<prefix><n>), or a cluster's nodes, comma-separated (see below).")
    var url: String

    @Option(help: "Rooms, each with its own controller.")
    var rooms = 1

    @Option(help: "Members per room, named m0, m1, ...; m0 is the controller.")
    var members = 10

    @Option(help: "When the controllers send: closed, together or spread (see below).")
    var schedule: Schedule = .closed

    @Option(help: "Seconds between a controller's commands with --schedule together (default 0.5) or spread (default 1).")
    var interval: Double?

    @Option(help: "Measured commands per room.")
    var rounds = 100

    @Option(help: "With --schedule together or spread: measure for this many seconds (rounds = duration / interval) instead of --rounds.")
    var duration: Double?

    @Option(help: "Commands per room before measuring.")
    var warmupRounds = 3

    @Option(help: "Quiet connections held open as well, in rooms of their own (the server's cost of connections that take no part).")
    var idleConnections = 0

    @Option(help: "Members per room of the --idle-connections.")
    var idleRoomSize = 10

    @Flag(help: "Only open the connections and hold them (memory per connection).")
    var idle = false

    @Option(help: "Seconds to hold the connections in --idle mode.")
    var hold = 2.0

    @Option(help: "Subprotocol: json or text.")
    var encoding = "json"

    @Option(help: "How the generator reads each frame with the protocol's decoder: head (type, seq and status, the rest not read) or full (the whole event; json only). See docs/benchmarks.md.")
    var frameReading = "head"

    @Option(help: "Connections per client context (each context has its own service thread and polls all its connections on every wake-up); 0 puts all on one.")
    var connectionsPerClientContext = 0

    @Option(help: "The same for the --idle-connections, on contexts of their own; 0: as --connections-per-client-context, or all on one.")
    var idleConnectionsPerClientContext = 0

    @Option(help: "Local addresses to connect from, in turn, comma-separated (127.0.0.1,127.0.0.2,...): one address reaches a server port from about 28,000 ephemeral ports at most.")
    var sourceAddresses: String?

    @Option(help: "Connections being opened at once.")
    var connectWindow = 64

    @Option(help: "New connections per second at most (0: no limit). Each arrival is announced to its whole room.")
    var connectRate = 0.0

    @Option(help: "The server's process id, to read its CPU time and resident memory (VmRSS) from /proc; a cluster's, comma-separated.")
    var serverPid: String?

    @Option(help: "The process id of a PostgreSQL server the servers use, to read its CPU time and its children's from /proc.")
    var databasePid: Int32?

    @Option(help: "Seconds of silence that count as settled after connecting and after /watch.")
    var settle = 0.5

    @Option(help: "Seconds the whole run may take.")
    var timeout = 300.0

    @Option(help: "With several --url: round-robin (member i of every room on server i mod count, each room owned by the first) or by-room (every member of room r on server r mod count, as the nginx upstream places them).")
    var placement: String = "round-robin"

    @Option(help: "Prefix of the room names (default: bench-<random>-).")
    var roomPrefix: String?

    @Flag(help: "Members are players that answer each waiting state with /ready (json only); a /play is measured until the playing state that starts the group.")
    var players = false

    /// The interval of the fixed schedules.
    private var scheduleInterval: Double { interval ?? (schedule == .spread ? 1 : 0.5) }

    private var measuredRounds: Int {
        guard schedule != .closed, let duration else { return rounds }
        return max(1, Int((duration / scheduleInterval).rounded()))
    }

    private var planSchedule: LoadPlan.Schedule {
        switch schedule {
        case .closed: .closed
        case .together: .fixed(interval: scheduleInterval, staggered: false)
        case .spread: .fixed(interval: scheduleInterval, staggered: true)
        }
    }

    /// The servers --url names.
    private var servers: [WebSocketAddress]? {
        let addresses = url.split(separator: ",", omittingEmptySubsequences: false).map { WebSocketAddress(String($0)) }
        guard !addresses.isEmpty, addresses.allSatisfy({ $0 != nil }) else { return nil }
        return addresses.compactMap { $0 }
    }

    /// The processes --server-pid names.
    var processes: ServerProcesses {
        ServerProcesses(pids: serverPid.map { $0.split(separator: ",").compactMap { Int32($0) } } ?? [])
    }

    func validate() throws {
        for text in url.split(separator: ",", omittingEmptySubsequences: false) {
            guard let address = WebSocketAddress(String(text)) else { throw ValidationError("expected ws://HOST:PORT, got \(text)") }
            guard address.path == "/" || address.path.isEmpty else {
                throw ValidationError("give the server only, ws://HOST:PORT; rooms are chosen by the bench")
            }
        }
        if let serverPid {
            let parts = serverPid.split(separator: ",", omittingEmptySubsequences: false)
            guard parts.allSatisfy({ (Int32($0) ?? 0) > 0 }) else {
                throw ValidationError("--server-pid: a process id, or several comma-separated")
            }
        }
        guard rooms >= 1, members >= 1 else { throw ValidationError("--rooms and --members must be at least 1") }
        guard rounds >= 1, warmupRounds >= 0 else { throw ValidationError("--rounds must be at least 1, --warmup-rounds at least 0") }
        guard idleConnections >= 0, idleRoomSize >= 1 else {
            throw ValidationError("--idle-connections must be 0 or more, --idle-room-size at least 1")
        }
        if let interval, !(interval > 0 && interval <= 3600) { throw ValidationError("--interval: more than 0, at most 3600 seconds") }
        if let duration, !(duration > 0 && duration <= 86_400) { throw ValidationError("--duration: more than 0 seconds, at most a day") }
        if schedule == .closed && (interval != nil || duration != nil) {
            throw ValidationError("--interval and --duration go with --schedule together or spread")
        }
        guard ClientEncoding.named(encoding) != nil else { throw ValidationError("--encoding is json or text") }
        guard FrameReading(rawValue: frameReading) != nil else { throw ValidationError("--frame-reading is head or full") }
        if players && ClientEncoding.named(encoding) != .json {
            throw ValidationError("--players needs --encoding json: text state lines carry no seq to answer")
        }
        guard connectionsPerClientContext >= 0, idleConnectionsPerClientContext >= 0, connectWindow >= 1, connectRate >= 0 else {
            throw ValidationError("--connections-per-client-context must be 0 or more, --connect-window at least 1")
        }
        guard timeout > 0, settle >= 0, hold >= 0 else { throw ValidationError("times must be positive") }
        if let roomPrefix {
            // Idle rooms are <prefix>idle-<n>, the longest names.
            guard roomPrefix.count + "idle-".count + String(max(rooms, idleConnections)).count <= 64,
                  roomPrefix.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || $0.properties.numericType != nil || "._-".unicodeScalars.contains($0)) })
            else { throw ValidationError("--room-prefix: A-Z a-z 0-9 . _ - only, room names at most 64 characters") }
        }
    }

    func run() throws {
        guard let servers, let encoding = ClientEncoding.named(encoding) else {
            throw ExitCode.validationFailure
        }
        let deadline = SystemClock.monotonic() + .seconds(timeout)
        func remaining() -> Double { max(0.1, (deadline - SystemClock.monotonic()).seconds) }

        let connections = rooms * members + idleConnections
        let perContext = connectionsPerClientContext == 0 ? rooms * members : connectionsPerClientContext
        let idlePerContext = idleConnectionsPerClientContext > 0 ? idleConnectionsPerClientContext
            : connectionsPerClientContext > 0 ? connectionsPerClientContext : idleConnections
        let prefix = roomPrefix ?? "bench-\(String(UInt32.random(in: 0...UInt32.max), radix: 36))-"
        var plan = LoadPlan(servers: servers, rooms: rooms, members: members, rounds: measuredRounds, warmupRounds: warmupRounds,
                            schedule: planSchedule, idleConnections: idleConnections, idleRoomSize: idleRoomSize,
                            encoding: encoding, connectionsPerContext: perContext, idleConnectionsPerContext: idlePerContext,
                            connectWindow: connectWindow, connectRate: connectRate, roomPrefix: prefix)
        plan.frameReading = FrameReading(rawValue: frameReading) ?? .head
        guard let placement = LoadPlan.Placement(rawValue: placement) else {
            Output.error("bench: --placement is round-robin or by-room, not \(placement)")
            throw ExitCode.validationFailure
        }
        plan.placement = placement
        plan.players = players
        if let sourceAddresses {
            let list = sourceAddresses.split(separator: ",").map { String($0) }
            guard !list.isEmpty, list.allSatisfy(Self.isAddressLiteral) else {
                Output.error("bench: --source-addresses takes IP addresses separated by commas, not \(sourceAddresses)")
                throw ExitCode.validationFailure
            }
            plan.sourceAddresses = list
        }
        // One descriptor per connection, plus stdio and each context's wake-up pipe.
        let needed = rlim_t(connections + 16 + 4 * plan.contexts)
        let limit = FileLimit.raise(toAtLeast: needed)
        guard limit >= needed else {
            Output.error("bench: \(connections) connections need \(needed) file descriptors; the limit is \(limit) "
                + "and this process may not raise it (the hard limit needs CAP_SYS_RESOURCE to raise)")
            throw ExitCode.failure
        }
        Output.line("bench: \(rooms) room(s) x \(members) member(s)"
            + (idleConnections > 0 ? " + \(idleConnections) idle in \(plan.idleRooms) room(s)" : "")
            + " = \(connections) connections, \(encoding.short), \(plan.contexts) client context(s), "
            + "frames read by \(plan.frameReading.rawValue), " + describe(plan)
            + (servers.count <= 1 ? "" : placement == .byRoom ? ", each room's members all on one of \(servers.count) servers (room r on r mod \(servers.count))"
                : ", members round-robin over \(servers.count) servers, each room's first on the first"))

        let rssBefore = processes.residentKiB
        let generator = try LoadGenerator(plan: plan)
        defer {
            if !generator.closeAll(timeout: min(30, remaining())) {
                Output.error("bench: connections did not all close in time")
            }
        }

        var connectSeconds = 0.0
        if idleConnections > 0 {
            guard let seconds = generator.openIdle(timeout: remaining()) else {
                throw connectFailure(generator, connections: idleConnections)
            }
            connectSeconds += seconds
        }
        // Controllers first, and the session started before the other members
        // arrive: they join it on connect, one announcement each, where a /watch
        // after them would announce every member to every member once more.
        // With several servers, every room's first member is welcomed before the
        // others connect, so that the first server owns every room.
        let first = idle && servers.count == 1 ? 0..<members : 0..<1
        guard let seconds = generator.open(members: first, timeout: remaining()) else {
            throw connectFailure(generator, connections: connections)
        }
        connectSeconds += seconds
        if !idle {
            guard generator.startSessions(timeout: remaining()) else {
                Output.error("bench: /watch did not reach every controller in time")
                throw ExitCode.failure
            }
        }
        if first.upperBound < members {
            guard let seconds = generator.open(members: first.upperBound..<members, timeout: remaining()) else {
                throw connectFailure(generator, connections: connections)
            }
            connectSeconds += seconds
        }
        Output.line(String(format: "connect: %d connections welcomed in %.2f s (%.0f per second)",
                           connections, connectSeconds, Double(connections) / max(connectSeconds, 1e-9)))
        var failed = false
        if !generator.waitUntilQuiet(quiet: settle, timeout: remaining()) {
            Output.error("bench: the arrival announcements did not settle in time")
            failed = true
        }
        reportMemory(before: rssBefore, connections: connections)

        let passed = idle
            ? holdIdle(generator, connections: connections, seconds: min(hold, remaining()), rssBefore: rssBefore)
            : measure(generator, rounds: plan.rounds, rssBefore: rssBefore, deadline: deadline)
        if !passed { failed = true }
        if failed { throw ExitCode.failure }
    }

    private func describe(_ plan: LoadPlan) -> String {
        if idle { return "idle" }
        let warmup = "(+\(warmupRounds) warm-up)"
        switch schedule {
        case .closed:
            return "closed loop, \(plan.rounds) rounds per room \(warmup)"
        case .together, .spread:
            return String(format: "%@ every %g s, %d rounds per room %@ = %g s", schedule.rawValue, scheduleInterval,
                          plan.rounds, warmup, Double(plan.rounds) * scheduleInterval)
        }
    }

    /// Holds the open connections and reports what the server spent meanwhile.
    private func holdIdle(_ generator: LoadGenerator, connections: Int, seconds: Double, rssBefore: Int?) -> Bool {
        let processes = self.processes
        let serverBefore = processes.cpuEach
        let databaseBefore = databasePid.flatMap(ProcessStats.treeCPUSeconds)
        let ownBefore = ProcessStats.ownCPUSeconds()
        let holdStart = SystemClock.monotonic()
        SystemClock.sleep(for: .seconds(seconds))
        let held = (SystemClock.monotonic() - holdStart).seconds
        let progress = generator.snapshot
        guard progress.failed == 0 else {
            Output.error("bench: \(progress.failed) connection(s) dropped while idle: \(progress.firstFailure ?? "")")
            return false
        }
        let ownCPU = ProcessStats.ownCPUSeconds() - ownBefore
        let serverEach = processes.cpuEach.flatMap { after in serverBefore.map { zip(after, $0).map { $0 - $1 } } }
        let serverCPU = serverEach.map { $0.reduce(0, +) }
        var line = String(format: "idle: %d connections held for %.1f s", connections, held)
        if let serverCPU, let serverEach {
            line += String(format: "; server cpu meanwhile %.2f s (%.0f%% of one core)", serverCPU, 100 * serverCPU / max(held, 1e-9))
            if serverEach.count > 1 {
                line += " (" + serverEach.map { String(format: "%.2f", $0) }.joined(separator: " + ") + " s)"
            }
        }
        let databaseCPU = databasePid.flatMap(ProcessStats.treeCPUSeconds).flatMap { after in databaseBefore.map { after - $0 } }
        if let databaseCPU {
            line += String(format: "; database %.2f s (%.0f%% of one core)", databaseCPU, 100 * databaseCPU / max(held, 1e-9))
        }
        let rss = processes.residentKiB
        if let rss { line += ", rss \(rss) KiB" }
        Output.line(line)
        var result = BenchResult(workload: "idle")
        result.add("connections", connections)
        result.add("seconds", held, "%.1f")
        if let serverCPU, let serverEach {
            result.add("server_cpu_pct", 100 * serverCPU / max(held, 1e-9), "%.1f")
            if serverEach.count > 1 {
                result.add("server_cpu_pct_each", serverEach.map { String(format: "%.1f", 100 * $0 / max(held, 1e-9)) }.joined(separator: "/"))
            }
        }
        if let databaseCPU { result.add("database_cpu_pct", 100 * databaseCPU / max(held, 1e-9), "%.1f") }
        result.add("bench_cpu_pct", 100 * ownCPU / max(held, 1e-9), "%.1f")
        addMemory(to: &result, rss: rss, before: rssBefore, connections: connections)
        Output.line(result.line)
        return true
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

extension BenchCommand {
    /// An IPv4 or IPv6 address as digits, which a socket can be bound to.
    static func isAddressLiteral(_ text: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, text, &v4) == 1 || inet_pton(AF_INET6, text, &v6) == 1
    }
}
