import CowatchCore
import CowatchCoreChecks
import Foundation
import SlashCommands

// Runs of random sessions: sequences derived from a base seed, each run by
// `RoomDriver` until its first broken invariant, which is then minimised and
// described so that it can be pasted into a test.

/// What a run found: each distinct invariant's first violation, minimised.
struct RandomRunReport: Sendable {
    var sequences = 0
    var steps = 0
    var findings: [String] = []
    var invariants: Set<String> = []
}

enum RandomRoomRun {
    struct Options: Sendable {
        var sequences: Int
        var steps: Int
        var byteHeavyNames = false
        /// Parse every `jsonEvery`-th frequent event back from JSON (1: all of them).
        var jsonEvery = 1
        /// Distinct invariants to report (each minimised) before the run stops.
        var maximumFindings = 4
    }

    static func hex(_ value: UInt64) -> String { "0x" + String(value, radix: 16, uppercase: true) }

    /// Runs `options.sequences` sequences derived from `baseSeed`.
    static func run(baseSeed: UInt64, options: Options, monitor: RandomRunMonitor) -> RandomRunReport {
        var report = RandomRunReport()
        for index in 0..<options.sequences {
            let seed = SplitMix64.derive(baseSeed, index)
            let outcome = generate(seed: seed, options: options, tolerating: report.invariants, monitor: monitor)
            report.sequences += 1
            report.steps += outcome.steps.count
            guard let violation = outcome.violation, !report.invariants.contains(violation.invariant) else { continue }
            report.invariants.insert(violation.invariant)
            let minimal = minimise(outcome.steps, setup: outcome.setup, invariant: violation.invariant,
                                   options: options, monitor: monitor)
            report.findings.append(describe(violation, seed: seed, baseSeed: baseSeed, sequence: index,
                                            original: outcome.steps.count, minimal: minimal, setup: outcome.setup,
                                            options: options))
            if report.findings.count >= options.maximumFindings { break }
        }
        return report
    }

    /// Generates and runs one sequence, stopping at its first violation.
    static func generate(seed: UInt64, options: Options, tolerating tolerated: Set<String> = [],
                         monitor: RandomRunMonitor?, trace: Bool = false)
        -> (steps: [RoomStep], setup: RoomSetup, violation: InvariantViolation?, trace: [String]) {
        var generator = RandomSessionGenerator(seed: seed, byteHeavyNames: options.byteHeavyNames)
        var driver = RoomDriver(generator.setup, jsonEvery: options.jsonEvery)
        driver.tolerated = tolerated
        if trace { driver.trace = [] }
        monitor?.beginSequence(seed: seed, setup: generator.setup)
        var steps: [RoomStep] = []
        for index in 0..<options.steps {
            let step = generator.nextStep(driver)
            steps.append(step)
            if trace { driver.trace?.append("\(index + 1). \(step)") }
            monitor?.beginStep(index, step, record: true)
            driver.perform(step)
            monitor?.endStep()
            if driver.violation != nil { break }
        }
        return (steps, generator.setup, driver.violation, driver.trace ?? [])
    }

    /// Runs a fixed list of steps; returns the first violation and its step index.
    static func replay(_ steps: [RoomStep], setup: RoomSetup, focus: String? = nil, monitor: RandomRunMonitor?,
                       trace: Bool = false) -> (violation: InvariantViolation?, index: Int?, trace: [String]) {
        var driver = RoomDriver(setup, jsonEvery: 1)
        driver.focus = focus
        if trace { driver.trace = [] }
        for (index, step) in steps.enumerated() {
            if trace { driver.trace?.append("\(index + 1). \(step)") }
            monitor?.beginStep(index, step, record: false)
            driver.perform(step)
            monitor?.endStep()
            if let violation = driver.violation { return (violation, index, driver.trace ?? []) }
        }
        return (nil, nil, driver.trace ?? [])
    }

    /// Delta debugging: drops chunks of steps while the same invariant still breaks.
    static func minimise(_ steps: [RoomStep], setup: RoomSetup, invariant: String, options: Options,
                         monitor: RandomRunMonitor) -> [RoomStep] {
        func fails(_ candidate: [RoomStep]) -> Int? {
            let result = replay(candidate, setup: setup, focus: invariant, monitor: monitor)
            return result.violation?.invariant == invariant ? result.index : nil
        }
        guard var end = fails(steps) else { return steps }
        var current = Array(steps[...end])
        var chunk = max(1, current.count / 2)
        var attempts = 0
        while chunk >= 1 && attempts < 4_000 {
            var removedAny = false
            var start = 0
            while start < current.count && attempts < 4_000 {
                attempts += 1
                var candidate = current
                candidate.removeSubrange(start..<min(current.count, start + chunk))
                if let index = fails(candidate) {
                    end = index
                    current = Array(candidate[...index])
                    removedAny = true
                } else {
                    start += chunk
                }
            }
            if !removedAny {
                if chunk == 1 { break }
                chunk /= 2
            }
        }
        return current
    }

    static func describe(_ violation: InvariantViolation, seed: UInt64, baseSeed: UInt64, sequence: Int,
                         original: Int, minimal: [RoomStep], setup: RoomSetup, options: Options) -> String {
        var text = "INVARIANT VIOLATED: \(violation.invariant)\n"
        text += "  \(violation.detail)\n"
        text += "  while handling: \(violation.input)\n"
        text += "  base seed \(hex(baseSeed)), sequence \(sequence), sequence seed \(hex(seed)) "
        text += "(replay with COWATCH_RANDOM_REPLAY=\(hex(seed))\(options.byteHeavyNames ? " COWATCH_RANDOM_HEAVY=1" : "")), "
        text += "failed at step \(original) of the sequence\n"
        text += "  minimal reproduction (\(minimal.count) steps, \(setup); {seq} is the room's seq when the line is sent):\n"
        let replayed = replay(minimal, setup: setup, focus: violation.invariant, monitor: nil, trace: true)
        for line in replayed.trace { text += "    \(line)\n" }
        return text
    }
}
