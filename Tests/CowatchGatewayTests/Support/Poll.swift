import Foundation

/// Waits until `condition` holds, looking again every 10 ms, for at most
/// `timeout` seconds; throws, naming `what`, if it never does. For what a server
/// shows only when asked (its `/metrics`): the test waits for the condition,
/// never for a guess of how long it takes. What a test can wait for as an event
/// (a message, a close, a process's exit) it waits for as one.
func poll(until what: String, timeout: Double = 10, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while true {
        if try condition() { return }
        guard Date() < deadline else { throw TestFailure("\(what) did not happen within \(timeout) s") }
        Thread.sleep(forTimeInterval: 0.01)
    }
}
