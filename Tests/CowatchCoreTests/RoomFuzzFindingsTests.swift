import CowatchCore
import CowatchCoreChecks
import Testing

/// Inputs the room fuzzer (`commands/fuzz room`) found, kept as fixed step lists
/// run through the same driver and invariants (docs/robustness.md, Findings).
@Suite("Room fuzzer findings, replayed")
struct RoomFuzzFindingsTests {
    static func run(_ steps: [RoomStep], setup: RoomSetup) -> RoomDriver {
        var driver = RoomDriver(setup)
        for step in steps where driver.violation == nil {
            driver.perform(step)
        }
        return driver
    }

    /// The start invariant recognised `/play now` by its text split on spaces, so
    /// `/play \t now` (a tab the parser takes as a separator) looked like a plain
    /// `/play` starting before every player was ready. The check now asks the parser.
    @Test("/play with a tab before now is /play now: it starts without waiting")
    func playNowWithTab() {
        var configuration = RoomConfiguration()
        configuration.maximumQueueLength = 2
        let steps: [RoomStep] = [
            .connect(slot: 0, name: "alice", player: false, join: false, resume: .slot(1)),
            .connect(slot: 1, name: "bob", player: true, join: true, resume: .none),
            .message(slot: 0, text: "/watch https://example.org/a.mp4 https://example.org/b.mp4"),
            .message(slot: 1, text: "/player {seq}"),
            .message(slot: 0, text: "/queue 5"),
            .message(slot: 1, text: "/autoplay on"),
            .message(slot: 0, text: "/ready {seq}"),
            .message(slot: 0, text: "/play \t now"),
        ]
        let driver = Self.run(steps, setup: RoomSetup(slots: 2, configuration: configuration))
        #expect(driver.violation == nil, "\(driver.violation?.invariant ?? ""): \(driver.violation?.detail ?? "")")
        #expect(driver.room.state.playback.status == .playing)
    }
}
