import ArgumentParser
import Testing
@testable import cowatch

/// `cowatch connect`'s command line refused before anything starts.
@Suite("cowatch connect's command line")
struct ConnectCommandLineTests {
    static let room = "ws://127.0.0.1:7480/rooms/lobby"

    @Test("a --timeout or --reconnect-for no clock can count is refused, not taken",
          arguments: ["--timeout", "--reconnect-for"], ["inf", "nan", "1e300", "86401", "-1"])
    func wildSeconds(_ option: String, _ value: String) {
        #expect(throws: (any Error).self) { try ConnectCommand.parse([Self.room, option, value]) }
    }

    @Test("a --timeout of a second up to a day is taken", arguments: ["0.5", "10", "86400"])
    func timeout(_ value: String) throws {
        let command = try ConnectCommand.parse([Self.room, "--timeout", value])
        #expect(command.timeout == Double(value))
    }
}
