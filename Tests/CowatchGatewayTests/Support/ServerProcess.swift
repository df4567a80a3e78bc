#if canImport(Glibc)
import Glibc
#endif
import CowatchClient
import Foundation

/// The `cowatch` binary running as its own process, for what only a process can
/// show: being killed with SIGKILL and started again on the same data.
final class ServerProcess: @unchecked Sendable {
    let process: Process
    let port: Int
    /// What the server wrote up to its banner (what it logged while starting).
    let startOutput: String
    private let output: Pipe
    /// Signalled when the process exits.
    private let exited = DispatchSemaphore(value: 0)

    /// The binary built next to the test bundle.
    static var binary: String {
        let tests = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").resolvingSymlinksInPath()
        return tests.deletingLastPathComponent().appendingPathComponent("cowatch").path
    }

    init(arguments: [String], logLevel: String = "error") throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: Self.binary)
        process.arguments = ["serve", "--port", "0", "--log-level", logLevel] + arguments
        output = Pipe()
        process.standardOutput = output
        process.standardError = output
        let exited = exited
        process.terminationHandler = { _ in exited.signal() }
        try process.run()
        let banner = Self.readLine(from: output.fileHandleForReading, timeout: 20)
        guard let range = banner.range(of: "http://127.0.0.1:"),
              let port = Int(banner[range.upperBound...].prefix { $0.isNumber }) else {
            process.terminate()
            throw TestFailure("the server did not start: \(banner)")
        }
        self.port = port
        startOutput = banner
    }

    /// Runs the binary to completion and returns its exit status and output.
    static func run(_ arguments: [String]) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: binary)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func address(_ path: String) -> WebSocketAddress {
        WebSocketAddress("ws://127.0.0.1:\(port)\(path)")!
    }

    /// Waits until the store has written every change queued so far (its
    /// backlog in /metrics is 0): what a member has seen is then on disk, and a
    /// kill -9 loses none of it.
    func waitUntilWritten(timeout: Double = 20) throws {
        guard let address = WebSocketAddress("http://127.0.0.1:\(port)/metrics") else { throw TestFailure("no metrics address") }
        try poll(until: "the store writing every change", timeout: timeout) {
            (try? PlainHTTP.request("GET", address, bearer: nil).body)?.split(separator: "\n")
                .contains("cowatch_store_pending_changes 0") == true
        }
    }

    /// What the server wrote after its banner, once it has exited.
    func remainingOutput() -> String {
        String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    func kill9() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// SIGTERM, then the exit status; a server still running after 10 s is
    /// killed and reported as -1, so a test never waits forever.
    func terminate() -> Int32 {
        process.terminate()
        if exited.wait(timeout: .now() + 10) == .timedOut {
            kill9()
            return -1
        }
        return process.terminationStatus
    }

    private static func readLine(from handle: FileHandle, timeout: Double) -> String {
        let deadline = Date().addingTimeInterval(timeout)
        var text = ""
        while Date() < deadline {
            let data = handle.availableData
            if data.isEmpty { break }
            text += String(decoding: data, as: UTF8.self)
            if text.contains("serving on") && text.contains("\n") { break }
        }
        return text
    }
}
