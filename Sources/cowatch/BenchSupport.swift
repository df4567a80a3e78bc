#if canImport(Glibc)
import Glibc
#endif
import Foundation

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

    /// CPU time of the process and of its descendants, living (from their
    /// own /proc entries) and ended (the children it waited for), in seconds:
    /// a PostgreSQL server with its sessions.
    static func treeCPUSeconds(_ root: Int32) -> Double? {
        guard let own = fields(root), own.count > 14, let user = Double(own[11]), let system = Double(own[12]),
              let childrenUser = Double(own[13]), let childrenSystem = Double(own[14]) else { return nil }
        var ticks = user + system + childrenUser + childrenSystem
        var parents: [Int32: [Int32]] = [:]
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != root, let stat = fields(pid), stat.count > 12, let parent = Int32(stat[1])
            else { continue }
            parents[parent, default: []].append(pid)
        }
        var pending = parents[root] ?? []
        while let pid = pending.popLast() {
            if let stat = fields(pid), stat.count > 12, let user = Double(stat[11]), let system = Double(stat[12]) {
                ticks += user + system
            }
            pending += parents[pid] ?? []
        }
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The fields of /proc/PID/stat after the command name: state first, then
    /// the parent's id, ...; utime and stime at 11 and 12, cutime and cstime at 13 and 14.
    private static func fields(_ pid: Int32) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let end = stat.lastIndex(of: ")") else { return nil }
        return stat[stat.index(after: end)...].split(separator: " ")
    }

    static func ownCPUSeconds() -> Double {
        var usage = rusage()
        guard getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage) == 0 else { return 0 }
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}

/// The servers a bench reads from /proc: one, or a cluster's nodes. A figure
/// is nil when no process was given or one could not be read.
struct ServerProcesses {
    let pids: [Int32]

    /// CPU seconds of each process, in the order given.
    var cpuEach: [Double]? {
        guard !pids.isEmpty else { return nil }
        let each = pids.compactMap(ProcessStats.cpuSeconds)
        return each.count == pids.count ? each : nil
    }

    var cpuSeconds: Double? { cpuEach.map { $0.reduce(0, +) } }

    /// VmRSS of each process, in KiB.
    var residentEach: [Int]? {
        guard !pids.isEmpty else { return nil }
        let each = pids.compactMap(ProcessStats.residentKiB)
        return each.count == pids.count ? each : nil
    }

    /// VmRSS of all of them together, in KiB.
    var residentKiB: Int? { residentEach.map { $0.reduce(0, +) } }
}

/// The `result: key=value ...` line that ends a bench run, for scripts
/// (`commands/bench fanout` makes its table from them).
struct BenchResult {
    private var pairs: [String]

    init(workload: String) {
        pairs = ["workload=\(workload)"]
    }

    mutating func add(_ key: String, _ value: Int) {
        pairs.append("\(key)=\(value)")
    }

    mutating func add(_ key: String, _ value: String) {
        pairs.append("\(key)=\(value)")
    }

    mutating func add(_ key: String, _ value: Double, _ format: String) {
        pairs.append("\(key)=" + (value.isFinite ? String(format: format, value) : "-"))
    }

    var line: String { "result: " + pairs.joined(separator: " ") }
}
