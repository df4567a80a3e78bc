import Foundation
import Testing

/// The rule of one time vocabulary (README, `Sources/CowatchTime/`), read from the
/// sources: only CowatchTime reads a clock; every other product file takes its
/// time from a `TimeSource` it is given, so that a test's skipped time moves it.
@Suite("Only CowatchTime reads a clock")
struct ClockReadingRuleTests {
    static let sources = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources")

    /// The ways Swift on Linux reads a clock or the date. CowatchTime's own
    /// `SystemClock` is the vocabulary's one door to them, for what runs in real
    /// time anyway (a process's pacing, a network wait).
    static let readings = ["Date()", "Date.now", "DispatchTime.now", "DispatchWallTime.now", "ContinuousClock",
                           "SuspendingClock", "clock_gettime", "gettimeofday", "systemUptime", "time(nil)",
                           "CFAbsoluteTimeGetCurrent", "timeIntervalSinceNow"]

    /// Whether a line of code (comments aside) reads a clock itself.
    static func reads(_ line: Substring) -> Bool {
        let code = line.split(separator: "//", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return readings.contains { code.contains($0) }
    }

    /// `file:line` of every reading outside `Sources/CowatchTime/`.
    static func readingsOutsideTime() throws -> [String] {
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(atPath: sources.path)
        while let relative = enumerator?.nextObject() as? String {
            guard relative.hasSuffix(".swift"), !relative.hasPrefix("CowatchTime/") else { continue }
            let text = try String(contentsOf: sources.appendingPathComponent(relative), encoding: .utf8)
            for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() where reads(line) {
                found.append("\(relative):\(number + 1): \(line.trimmingCharacters(in: .whitespaces))")
            }
        }
        return found.sorted()
    }

    @Test("the rule sees a clock read, and not a time source asked or a comment")
    func ruleSeesReadings() {
        #expect(Self.reads("let started = Date()"))
        #expect(Self.reads("let deadline = DispatchTime.now() + .seconds(4)"))
        #expect(Self.reads("let now = ContinuousClock.now"))
        #expect(!Self.reads("let now = time.now()"))
        #expect(!Self.reads("let now = eventTime.monotonic  // not Date()"))
    }

    @Test("no product file outside CowatchTime reads a clock")
    func onlyTimeReadsClocks() throws {
        #expect(FileManager.default.fileExists(atPath: Self.sources.appendingPathComponent("CowatchTime").path))
        let found = try Self.readingsOutsideTime()
        #expect(found.isEmpty, "clocks read outside Sources/CowatchTime:\n\(found.joined(separator: "\n"))")
    }
}
