import CowatchCore
import CowatchCoreChecks
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// One fuzz input as one room's life: decode, run, trap on the first broken
/// invariant with everything needed to reproduce it.
enum RoomSession {
    /// Frequent events (states, chat, arrivals) are parsed back from JSON one in
    /// this many; rarer ones always are. Parsing every one would spend most of
    /// each run in Foundation rather than in the room.
    static let jsonEvery = 8
    /// `COWATCH_FUZZ_TRACE=1` prints every step and published state while
    /// replaying, to read what an input does.
    static let tracing = getenv("COWATCH_FUZZ_TRACE") != nil

    static func check(_ bytes: UnsafeRawBufferPointer) {
        var decoder = RoomStepDecoder(bytes)
        let setup = decoder.setup()
        var driver = RoomDriver(setup, jsonEvery: tracing ? 1 : jsonEvery)
        if tracing {
            driver.trace = []
            print("setup: \(setup)")
        }
        var steps: [RoomStep] = []
        while let step = decoder.nextStep() {
            steps.append(step)
            if tracing { driver.trace?.append("\(steps.count). \(step)") }
            driver.perform(step)
            if tracing {
                for line in driver.trace ?? [] { print(line) }
                driver.trace = []
            }
            if let violation = driver.violation {
                var report = "room invariant broken: \(violation.invariant)\n  \(violation.detail)\n"
                report += "  while handling: \(violation.input)\n  setup: \(setup)\n  steps:\n"
                for (index, step) in steps.enumerated() { report += "    \(index + 1). \(step)\n" }
                fatalError(report)
            }
        }
    }
}
