import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A trap in the room kills the test process before any report is printed, so
/// each worker leaves a breadcrumb (its sequence seed and step) that a signal
/// handler writes to standard error before handing the signal to the handler that
/// was there before (the Swift runtime's backtracer, or the default).
enum CrashBreadcrumbs {
    static let capacity = 64
    static let messageBytes = 256
    private static let lock = NSLock()
    private nonisolated(unsafe) static let used: UnsafeMutablePointer<Bool> = {
        let pointer = UnsafeMutablePointer<Bool>.allocate(capacity: capacity)
        pointer.initialize(repeating: false, count: capacity)
        return pointer
    }()
    private nonisolated(unsafe) static let threads = UnsafeMutablePointer<pthread_t>.allocate(capacity: capacity)
    private nonisolated(unsafe) static let steps: UnsafeMutablePointer<Int> = {
        let pointer = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
        pointer.initialize(repeating: 0, count: capacity)
        return pointer
    }()
    private nonisolated(unsafe) static let lengths: UnsafeMutablePointer<Int> = {
        let pointer = UnsafeMutablePointer<Int>.allocate(capacity: capacity)
        pointer.initialize(repeating: 0, count: capacity)
        return pointer
    }()
    private nonisolated(unsafe) static let messages: UnsafeMutablePointer<UInt8> = {
        let pointer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity * messageBytes)
        pointer.initialize(repeating: 0, count: capacity * messageBytes)
        return pointer
    }()
    /// The actions in place before ours, by signal number.
    nonisolated(unsafe) static let previous: UnsafeMutablePointer<sigaction> = {
        let pointer = UnsafeMutablePointer<sigaction>.allocate(capacity: 64)
        pointer.initialize(repeating: sigaction(), count: 64)
        return pointer
    }()
    static let signals: [Int32] = [SIGILL, SIGTRAP, SIGABRT, SIGFPE, SIGBUS, SIGSEGV]
    private static let installed: Bool = {
        for signal in signals {
            var action = sigaction()
            #if canImport(Glibc)
            action.__sigaction_handler.sa_handler = randomRoomCrashHandler
            #else
            action.__sigaction_u.__sa_handler = randomRoomCrashHandler
            #endif
            sigemptyset(&action.sa_mask)
            action.sa_flags = 0
            _ = sigaction(signal, &action, previous + Int(signal))
        }
        return true
    }()

    /// A slot for the calling thread; installs the handler on first use.
    static func register() -> Int? {
        _ = installed
        lock.lock(); defer { lock.unlock() }
        guard let slot = (0..<capacity).first(where: { !used[$0] }) else { return nil }
        (threads + slot).initialize(to: pthread_self())
        steps[slot] = 0
        lengths[slot] = 0
        used[slot] = true
        return slot
    }

    static func release(_ slot: Int) {
        lock.lock(); defer { lock.unlock() }
        used[slot] = false
    }

    static func note(_ slot: Int, message: String) {
        let bytes = Array(message.utf8.prefix(messageBytes))
        lengths[slot] = 0
        for (index, byte) in bytes.enumerated() { messages[slot * messageBytes + index] = byte }
        lengths[slot] = bytes.count
    }

    static func note(_ slot: Int, step: Int) {
        steps[slot] = step
    }

    /// Runs in the signal handler: only async-signal-safe calls (write).
    static func report() {
        let me = pthread_self()
        for slot in 0..<capacity where used[slot] && pthread_equal(threads[slot], me) != 0 && lengths[slot] > 0 {
            _ = write(2, messages + slot * messageBytes, lengths[slot])
            var divisor = 1
            while divisor <= steps[slot] / 10 { divisor *= 10 }
            var rest = steps[slot]
            while divisor > 0 {
                var digit = UInt8(48 + rest / divisor)
                _ = write(2, &digit, 1)
                rest %= divisor
                divisor /= 10
            }
            var newline: UInt8 = 10
            _ = write(2, &newline, 1)
        }
    }
}

private func randomRoomCrashHandler(_ signal: Int32) {
    CrashBreadcrumbs.report()
    // Put the previous action back. Returning re-runs the faulting instruction (or
    // abort() raises again), which now reaches it.
    _ = sigaction(signal, CrashBreadcrumbs.previous + Int(signal), nil)
}
