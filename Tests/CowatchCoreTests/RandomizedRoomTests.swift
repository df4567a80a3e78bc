import CowatchCore
import CowatchCoreChecks
import Foundation
import SlashCommands
import Testing

/// Property tests: thousands of random sessions (3 to 8 members, players and not,
/// hosts, `join=0`, reconnects, measured round trips, timers) with every rule of
/// the coordinator checked after every step. The generator, the runs and the hang
/// and trap reports are in `Support/` (`RandomSessionGenerator.swift`,
/// `RandomRoomRun.swift`, `RandomRunMonitor.swift`, `CrashBreadcrumbs.swift`); the
/// host that carries out the room's actions, the driver and the invariants are in
/// the CowatchCoreChecks module, which the scenario tests and the room fuzzer share.
///
/// Deterministic: each case runs sequences derived from a fixed base seed. A
/// broken invariant reports the sequence seed, the input being handled, and a
/// minimised list of steps; a hang reports the seed and the steps so far; a trap
/// writes the seed and step to standard error before the runtime's backtrace.
/// `COWATCH_RANDOM_REPLAY=<sequence seed> swift test --filter
/// RandomizedRoomTests/replay` prints a full trace of that sequence (add
/// `COWATCH_RANDOM_HEAVY=1` for the byte-heavy-name test's sequences).
@Suite("Randomized room: invariants after every step of random sessions")
struct RandomizedRoomTests {
    static let baseSeeds: [UInt64] = [
        0x5EED_0001, 0xC0FF_EE00, 0x0BAD_C0DE, 0x1234_5678, 0xDEAD_BEEF, 0x0DDB_A110, 0x00FA_CADE, 0x7E57_7E57,
    ]
    /// 8 seeds x 250 sequences = 2,000 sequences of 200 steps.
    static let sequencesPerSeed = 250
    static let stepsPerSequence = 200
    /// A single input using this much processor time (Linux) or, elsewhere, wall
    /// time is a hang; a normal step takes well under a millisecond.
    static let hangProcessorSeconds = 3.0
    static let hangWallSeconds = 30.0

    @Test("2,000 random sessions of 200 steps keep every invariant", arguments: baseSeeds)
    func randomSessions(baseSeed: UInt64) async {
        let options = RandomRoomRun.Options(sequences: Self.sequencesPerSeed, steps: Self.stepsPerSequence)
        await Self.run(baseSeed: baseSeed, options: options)
    }

    /// Kept apart from the main run: a name at the 128-byte limit made of few
    /// characters cannot take a `-2` suffix, and a step that never returns must not
    /// stop the other rules from being exercised.
    @Test("names at the 128-byte limit: random sessions neither trap nor hang")
    func byteHeavyNames() async {
        let options = RandomRoomRun.Options(sequences: 40, steps: Self.stepsPerSequence, byteHeavyNames: true)
        await Self.run(baseSeed: 0x4EA7_1E55, options: options)
    }

    @Test("replay one sequence with a trace (COWATCH_RANDOM_REPLAY=<sequence seed>)",
          .enabled(if: ProcessInfo.processInfo.environment["COWATCH_RANDOM_REPLAY"] != nil))
    func replay() throws {
        let environment = ProcessInfo.processInfo.environment
        var text = environment["COWATCH_RANDOM_REPLAY"] ?? ""
        if text.lowercased().hasPrefix("0x") { text = String(text.dropFirst(2)) }
        let seed = try #require(UInt64(text, radix: 16), "COWATCH_RANDOM_REPLAY takes a hexadecimal sequence seed")
        // Printed as it goes, so a trap still leaves the steps that led to it.
        var generator = RandomSessionGenerator(seed: seed, byteHeavyNames: environment["COWATCH_RANDOM_HEAVY"] != nil)
        var driver = RoomDriver(generator.setup)
        driver.trace = []
        print("sequence \(RandomRoomRun.hex(seed)): \(generator.setup)")
        for index in 0..<Self.stepsPerSequence {
            let step = generator.nextStep(driver)
            print("\(index + 1). \(step)")
            fflush(nil)
            driver.perform(step)
            for line in driver.trace ?? [] { print(line) }
            driver.trace = []
            if let violation = driver.violation {
                Issue.record(Comment(rawValue: "[\(violation.invariant)] \(violation.detail)\n  while handling: \(violation.input)"))
                return
            }
        }
    }

    /// Runs on a worker thread and watches it: a step that does not return is
    /// reported as a hang (with its seed and steps) instead of blocking the suite.
    static func run(baseSeed: UInt64, options: RandomRoomRun.Options) async {
        let monitor = RandomRunMonitor(replayEnvironment: options.byteHeavyNames ? " COWATCH_RANDOM_HEAVY=1" : "")
        let started = DispatchTime.now().uptimeNanoseconds
        let worker = Thread {
            monitor.registerWorker()
            monitor.finish(RandomRoomRun.run(baseSeed: baseSeed, options: options, monitor: monitor))
        }
        worker.stackSize = 16 << 20
        worker.start()
        while true {
            if let report = monitor.finished {
                let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
                print("randomized room, base seed \(RandomRoomRun.hex(baseSeed)): \(report.sequences) sequences, "
                      + "\(report.steps) steps, \(report.findings.count) invariant(s) broken, "
                      + "\(NumberText.decimal(seconds, places: 1)) s")
                for finding in report.findings {
                    print(finding)
                    Issue.record(Comment(rawValue: finding))
                }
                return
            }
            if let hang = monitor.hungStep(processorSeconds: hangProcessorSeconds, wallSeconds: hangWallSeconds) {
                // The worker cannot be stopped; it spins until the test process exits.
                print(hang)
                Issue.record(Comment(rawValue: hang))
                return
            }
            try? await Task.sleep(nanoseconds: 20_000_000)
        }
    }
}
