@testable import CowatchBridge
import CowatchClient
import CowatchTime
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Logging
import Testing

/// An IRC network's timers are set on the clock it is given: skipped time
/// brings them at once, as passing time would.
@Suite("The IRC network's deadlines are on its clock")
struct NetworkDeadlineTests {
    /// A loopback TCP listener standing for an IRC server that never welcomes anyone.
    final class SilentServer {
        let descriptor: Int32
        let port: Int

        init() throws {
            let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = 0
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0, listen(descriptor, 4) == 0 else {
                close(descriptor)
                throw ServerFailure(words: "cannot listen on loopback")
            }
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
            }
            self.descriptor = descriptor
            port = Int(UInt16(bigEndian: address.sin_port))
        }

        deinit { close(descriptor) }

        /// The next connection; the bound only turns a hang into a failure.
        func accept() throws -> Int32 {
            var ready = [pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)]
            guard poll(&ready, 1, 30_000) == 1 else { throw ServerFailure(words: "nobody connected") }
            let connection = Glibc.accept(descriptor, nil, nil)
            guard connection >= 0 else { throw ServerFailure(words: "accept failed") }
            return connection
        }

        /// Whether the peer closed `connection` (reading what it sent until then).
        static func closedByPeer(_ connection: Int32) -> Bool {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                var ready = [pollfd(fd: connection, events: Int16(POLLIN), revents: 0)]
                guard poll(&ready, 1, 30_000) == 1 else { return false }
                let count = read(connection, &buffer, buffer.count)
                if count <= 0 { return true }
            }
        }
    }

    struct ServerFailure: Error { var words: String }

    @Test("a server that never completes registration is left when the clock passes the registration timeout")
    func registrationTimeout() throws {
        let server = try SilentServer()
        let time = SkippableTime()
        let settings = IRCSession.Settings(nick: "cowatch", channels: [.init(name: "#cowatch")],
                                           registrationTimeout: .seconds(600),
                                           reconnect: Backoff.Settings(first: .seconds(600), maximum: .seconds(600)))
        let network = IRCNetwork(identity: "test", host: "127.0.0.1", port: server.port, tls: nil, connectTimeout: .seconds(10),
                                 session: settings, logger: Logger(label: "test"), time: time)
        network.start { _ in }
        let connection = try server.accept()
        defer { close(connection) }
        // Connected: the registration's deadline is the one set.
        let deadline = SystemClock.monotonic() + .seconds(30)
        while time.pendingDeadlines == 0, SystemClock.monotonic() < deadline { SystemClock.sleep(for: .milliseconds(10)) }
        #expect(time.pendingDeadlines == 1)
        time.skip(.seconds(601))
        #expect(SilentServer.closedByPeer(connection))
        network.stop()
    }
}
