@testable import CowatchGateway
import CowatchTime
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// The bound on a whole visit (a link check, a subtitle fetch) is a deadline on
/// the gateway's clock: a server that accepts and never answers is given up on
/// when that clock passes the timeout, however little time went by.
@Suite("A visit's deadline is on the gateway's clock")
struct VisitDeadlineTests {
    /// Something called once, from another thread, and waited for.
    final class Answer<Value: Sendable>: @unchecked Sendable {
        private let lock = NSLock()
        private let arrived = DispatchSemaphore(value: 0)
        private var value: Value?

        func give(_ given: Value) {
            lock.withLock { value = given }
            arrived.signal()
        }

        /// The answer; the bound only turns a hang into a failure.
        func wait() -> Value? {
            _ = arrived.wait(timeout: .now() + 30)
            return lock.withLock { value }
        }
    }

    static let settings = MediaCheck.Settings(enabled: true, allowPrivateAddresses: true, timeout: .seconds(600))

    @Test("a link check that hears nothing ends when the clock is moved past its timeout")
    func linkCheck() throws {
        let (silent, port) = try FixedHTTPServer.listening()
        defer { close(silent) }
        let time = SkippableTime()
        let answer = Answer<MediaCheck.Verdict>()
        MediaProbe.check("http://127.0.0.1:\(port)/a.mp4", settings: Self.settings, time: time) { answer.give($0) }
        try poll(until: "the check's deadline is set") { time.pendingDeadlines == 1 }
        time.skip(.seconds(601))
        #expect(answer.wait() == .unchecked("the server did not answer within 600 s"))
    }

    @Test("a subtitle fetch that hears nothing ends when the clock is moved past its timeout")
    func subtitleFetch() throws {
        let (silent, port) = try FixedHTTPServer.listening()
        defer { close(silent) }
        let time = SkippableTime()
        let answer = Answer<SubtitleFetch.Outcome>()
        SubtitleFetch.fetch("http://127.0.0.1:\(port)/en.vtt", settings: Self.settings, time: time) { answer.give($0) }
        try poll(until: "the fetch's deadline is set") { time.pendingDeadlines == 1 }
        time.skip(.seconds(601))
        let refusal = SubtitleProxy.Refusal(status: 502, message: "the subtitles could not be fetched: the server did not answer within 600 s")
        #expect(answer.wait() == .failure(refusal))
    }
}
