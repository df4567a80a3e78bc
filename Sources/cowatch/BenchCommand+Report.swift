#if canImport(Glibc)
import Glibc
#endif
import ArgumentParser
import CowatchClient
import CowatchLoad
import CowatchTime
import Foundation

/// `cowatch bench`'s measured phase and what it prints: latencies, throughput,
/// CPU and memory (the options and the run are `BenchCommand.swift`).
extension BenchCommand {
    /// Runs the warm-up phase, then the measured one, and prints latency,
    /// throughput, CPU and memory figures.
    func measure(_ generator: LoadGenerator, rounds: Int, rssBefore: Int?, deadline: MonotonicInstant) -> Bool {
        func remaining() -> Double { max(0.1, (deadline - SystemClock.monotonic()).seconds) }
        if warmupRounds > 0 {
            let warmup = generator.runPhase(rounds: warmupRounds, timeout: remaining())
            guard warmup.completed else {
                report(incomplete: warmup, phase: "warm-up", generator)
                return false
            }
        }
        let processes = self.processes
        let serverBefore = processes.cpuEach
        let databaseBefore = databasePid.flatMap(ProcessStats.treeCPUSeconds)
        let ownBefore = ProcessStats.ownCPUSeconds()
        let wallBefore = SystemClock.monotonic()
        let results = generator.runPhase(rounds: rounds, timeout: remaining())
        let wall = max((SystemClock.monotonic() - wallBefore).seconds, 1e-9)
        let serverEach = processes.cpuEach.flatMap { after in serverBefore.map { zip(after, $0).map { $0 - $1 } } }
        let serverCPU = serverEach.map { $0.reduce(0, +) }
        let databaseCPU = databasePid.flatMap(ProcessStats.treeCPUSeconds).flatMap { after in databaseBefore.map { after - $0 } }
        let ownCPU = ProcessStats.ownCPUSeconds() - ownBefore
        let rss = processes.residentKiB

        func figures(_ sorted: [UInt64]) -> String {
            String(format: "p50 %.3f  p90 %.3f  p99 %.3f  max %.3f", Percentile.milliseconds(sorted, 0.5),
                   Percentile.milliseconds(sorted, 0.9), Percentile.milliseconds(sorted, 0.99), Percentile.milliseconds(sorted, 1))
        }
        let deliveries = results.stateDeliveries
        Output.line("latency ms, command to each member's state (\(deliveries) deliveries): " + figures(results.memberLatencies))
        Output.line("latency ms, command to the last member's state (\(results.lastMemberLatencies.count) commands): "
            + figures(results.lastMemberLatencies))
        let split = results.serverGroupLatencies.count == 2
        if split {
            let (first, others) = (results.serverGroupLatencies[0], results.serverGroupLatencies[1])
            let (firstLast, othersLast) = (results.serverGroupLastLatencies[0], results.serverGroupLastLatencies[1])
            Output.line("latency ms, members on the first server, where each room was created (\(first.count) deliveries): " + figures(first))
            Output.line("latency ms, members on the other servers (\(others.count) deliveries): " + figures(others))
            Output.line("latency ms, command to the last member on the first server (\(firstLast.count) commands): " + figures(firstLast))
            Output.line("latency ms, command to the last member on the other servers (\(othersLast.count) commands): " + figures(othersLast))
            func difference(_ fraction: Double, _ a: [UInt64], _ b: [UInt64]) -> Double {
                Percentile.milliseconds(b, fraction) - Percentile.milliseconds(a, fraction)
            }
            Output.line(String(format: "latency ms, other servers minus the first: p50 %+.3f  p99 %+.3f  last p50 %+.3f  last p99 %+.3f",
                               difference(0.5, first, others), difference(0.99, first, others),
                               difference(0.5, firstLast, othersLast), difference(0.99, firstLast, othersLast)))
        }
        let seconds = max(results.seconds, 1e-9)
        Output.line(String(format: "throughput: %d state deliveries in %.3f s = %.0f per second (all frames: %.0f per second); %.0f commands per second",
                           deliveries, results.seconds, Double(deliveries) / seconds, Double(results.frames) / seconds,
                           Double(results.commandsSent) / seconds))
        if schedule != .closed {
            Output.line(String(format: "schedule: %d of %d commands sent, the latest %.2f ms after its time",
                               results.commandsSent, results.commandsPlanned, results.scheduleLag * 1000))
        }
        let perDelivery = Double(max(1, deliveries))
        var cpu = String(format: "cpu over the measured %.2f s: bench %.2f s (%.0f%% of one core, %.1f us per state delivery)",
                         wall, ownCPU, 100 * ownCPU / wall, ownCPU / perDelivery * 1e6)
        if let serverCPU, let serverEach {
            cpu += String(format: ", server%@ %.2f s (%.0f%% of one core, %.1f us per state delivery)", serverEach.count > 1 ? "s" : "",
                          serverCPU, 100 * serverCPU / wall, serverCPU / perDelivery * 1e6)
        }
        if let databaseCPU {
            cpu += String(format: ", database %.2f s (%.0f%% of one core, %.1f us per state delivery)",
                          databaseCPU, 100 * databaseCPU / wall, databaseCPU / perDelivery * 1e6)
        }
        Output.line(cpu)
        if let serverEach, serverEach.count > 1 {
            Output.line("server cpu by pid: " + zip(processes.pids, serverEach).map { pid, seconds in
                String(format: "%d %.2f s (%.0f%% of one core, %.1f us per state delivery)",
                       pid, seconds, 100 * seconds / wall, seconds / perDelivery * 1e6)
            }.joined(separator: ", "))
        }
        if let rss {
            let each = processes.pids.count > 1 ? processes.residentEach.map { " (" + $0.map { "\($0)" }.joined(separator: " + ") + ")" } ?? "" : ""
            Output.line("server rss at the end: \(rss) KiB" + each)
        }

        var result = BenchResult(workload: schedule.rawValue)
        result.add("rooms", rooms)
        result.add("members", members)
        result.add("idle", idleConnections)
        result.add("connections", rooms * members + idleConnections)
        result.add("commands", results.commandsSent)
        result.add("deliveries", deliveries)
        for (name, fraction) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0)] {
            result.add(name + "_ms", Percentile.milliseconds(results.memberLatencies, fraction), "%.3f")
        }
        result.add("last_p50_ms", Percentile.milliseconds(results.lastMemberLatencies, 0.5), "%.3f")
        result.add("last_p99_ms", Percentile.milliseconds(results.lastMemberLatencies, 0.99), "%.3f")
        if split {
            result.add("servers", generator.plan.servers.count)
            for (group, name) in [(0, "first"), (1, "others")] {
                let latencies = results.serverGroupLatencies[group], last = results.serverGroupLastLatencies[group]
                for (key, fraction) in [("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("max", 1.0)] {
                    result.add("\(name)_\(key)_ms", Percentile.milliseconds(latencies, fraction), "%.3f")
                }
                result.add("\(name)_last_p50_ms", Percentile.milliseconds(last, 0.5), "%.3f")
                result.add("\(name)_last_p99_ms", Percentile.milliseconds(last, 0.99), "%.3f")
            }
        }
        result.add("deliveries_per_s", Double(deliveries) / seconds, "%.0f")
        if let serverCPU, let serverEach {
            result.add("server_us_per_delivery", serverCPU / perDelivery * 1e6, "%.2f")
            result.add("server_cpu_pct", 100 * serverCPU / wall, "%.1f")
            if serverEach.count > 1 {
                result.add("server_us_per_delivery_each", serverEach.map { String(format: "%.2f", $0 / perDelivery * 1e6) }.joined(separator: "/"))
                result.add("server_cpu_pct_each", serverEach.map { String(format: "%.1f", 100 * $0 / wall) }.joined(separator: "/"))
            }
        }
        if let databaseCPU {
            result.add("database_us_per_delivery", databaseCPU / perDelivery * 1e6, "%.2f")
            result.add("database_cpu_pct", 100 * databaseCPU / wall, "%.1f")
        }
        result.add("bench_us_per_delivery", ownCPU / perDelivery * 1e6, "%.2f")
        result.add("bench_cpu_pct", 100 * ownCPU / wall, "%.1f")
        addMemory(to: &result, rss: rss, before: rssBefore, connections: rooms * members + idleConnections)
        if schedule != .closed { result.add("lag_ms", results.scheduleLag * 1000, "%.2f") }
        result.add("complete", results.completed ? "yes" : "no")
        Output.line(result.line)

        guard results.completed else {
            report(incomplete: results, phase: "measured phase", generator)
            return false
        }
        return true
    }

    func report(incomplete results: PhaseResults, phase: String, _ generator: LoadGenerator) {
        let progress = generator.snapshot
        var text = "bench: \(phase) incomplete: \(results.lastMemberLatencies.count) of \(results.commandsPlanned) commands reached every member, "
            + "\(results.commandsSent) sent, \(progress.roomsFinished) of \(rooms) rooms finished"
        if results.refusals > 0 { text += ", \(results.refusals) command(s) refused by the server" }
        if progress.failed > 0 { text += ", \(progress.failed) connection(s) failed: \(progress.firstFailure ?? "")" }
        Output.error(text)
    }

    func connectFailure(_ generator: LoadGenerator, connections: Int) -> ExitCode {
        let progress = generator.snapshot
        Output.error("bench: only \(progress.welcomed) of \(connections) members welcomed (\(progress.opened) open, "
            + "\(progress.failed) failed\(progress.firstFailure.map { ": " + $0 } ?? ""))")
        return ExitCode.failure
    }

    func reportMemory(before: Int?, connections: Int) {
        let processes = self.processes
        guard !processes.pids.isEmpty else { return }
        guard let before, let after = processes.residentKiB else {
            Output.error("bench: could not read /proc/PID/status of " + processes.pids.map { "\($0)" }.joined(separator: ", "))
            return
        }
        Output.line(String(format: "server rss: %d KiB before, %d KiB with %d connections: %.2f KiB per connection",
                           before, after, connections, Double(after - before) / Double(connections)))
    }

    func addMemory(to result: inout BenchResult, rss: Int?, before: Int?, connections: Int) {
        guard let rss else { return }
        result.add("server_rss_kib", rss)
        if let before { result.add("rss_per_connection_kib", Double(rss - before) / Double(max(1, connections)), "%.2f") }
    }
}
