import ArgumentParser
import Testing
@testable import cowatch

/// `cowatch watch`'s command line refused before anything starts.
@Suite("cowatch watch's command line")
struct WatchCommandLineTests {
    static let room = "http://127.0.0.1:7480/rooms/lobby"

    @Test("a --timeout no clock can count is refused, not taken", arguments: ["inf", "nan", "1e300", "86401", "0", "-1"])
    func wildTimeout(_ value: String) {
        #expect(throws: (any Error).self) { try WatchCommand.parse([Self.room, "--timeout", value]) }
    }

    @Test("a --timeout of a second up to a day is taken", arguments: ["0.5", "10", "86400"])
    func timeout(_ value: String) throws {
        let command = try WatchCommand.parse([Self.room, "--timeout", value])
        #expect(command.timeout == Double(value))
    }
}
