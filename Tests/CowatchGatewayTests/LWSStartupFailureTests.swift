@testable import CowatchGateway
import Foundation
import Logging
import Testing

/// Why the server could not start (`Sources/CowatchGateway/LWS/LWSStartupFailure.swift`):
/// told from libwebsockets' error lines, so that a missing plugin is not reported
/// as a port in use.
@Suite("Start-up failures")
struct LWSStartupFailureTests {
    static func classify(_ lines: [String]) -> LWSStartupFailure {
        LWSStartupFailure.classify(errorLines: lines, host: "127.0.0.1", port: 7597)
    }

    @Test("a missing libev plugin is named, with the package that brings it, and not blamed on the address")
    func missingPlugin() {
        // What Debian's libwebsockets 4.1.6 logs when libwebsockets-evlib-ev is not installed.
        let failure = Self.classify(["lws_create_context: unable to load evlib plugin evlib_ev"])
        #expect(failure == .eventLibraryPlugin(name: "evlib_ev"))
        #expect(failure.description.contains("libwebsockets-evlib-ev"))
        #expect(failure.description.contains("evlib_ev"))
        #expect(!failure.description.contains("could not listen"))
        #expect(Self.classify(["lws_create_context: failed to load evlib_ev"]) == .eventLibraryPlugin(name: "evlib_ev"))
    }

    @Test("an address in use or not this machine's keeps the address message")
    func address() {
        let expected = LWSStartupFailure.address(host: "127.0.0.1", port: 7597)
        #expect(Self.classify(["ERROR on binding fd 7 to port 7597 (-1 98)", "init server failed", "Failed to create default vhost"]) == expected)
        #expect(Self.classify(["Unable to find interface 10.255.0.1"]) == expected)
        #expect(Self.classify([]) == expected)
        #expect(expected.description == "could not listen on 127.0.0.1:7597 (in use, or not an address of this machine?)")
    }

    @Test("a certificate libwebsockets cannot load is a TLS failure in its words")
    func tls() {
        let line = "lws_tls_server_certs_load: problem getting cert '/etc/cowatch/cert.pem'"
        let failure = Self.classify(["init server failed", line])
        #expect(failure == .tls(detail: line))
        #expect(failure.description.contains("/etc/cowatch/cert.pem"))
    }

    @Test("anything else is reported in libwebsockets' own words")
    func other() {
        let failure = Self.classify(["lws_create_context: OOM", "Failed to create default vhost"])
        #expect(failure == .other(detail: "lws_create_context: OOM; Failed to create default vhost"))
        #expect(failure.description.hasPrefix("libwebsockets could not start: "))
    }

    @Test("the lines gathered during a start are those logged meanwhile, at most keptLines")
    func gathering() {
        // Servers other tests start meanwhile may add lines of their own: only
        // this test's are looked at, beyond the bound.
        LWSStartupLines.record("gathering: before")
        let token = LWSStartupLines.begin()
        for index in 0..<(LWSStartupLines.keptLines + 5) { LWSStartupLines.record("gathering: line \(index)") }
        let lines = LWSStartupLines.finish(token)
        #expect(lines.count == LWSStartupLines.keptLines)
        let own = lines.filter { $0.hasPrefix("gathering: ") }
        #expect(own == (0..<own.count).map { "gathering: line \($0)" })
        #expect(!own.isEmpty)
        LWSStartupLines.record("gathering: after")
        #expect(LWSStartupLines.finish(token).isEmpty)
    }

    @Test("a real server on a port that is taken says so, from libwebsockets' own lines")
    func portTaken() throws {
        let holder = try TestServer()
        var logger = Logger(label: "cowatch.test")
        logger.logLevel = .critical
        let second = Gateway(configuration: GatewayConfiguration(port: holder.port), store: nil, logger: logger)
        #expect {
            _ = try second.start()
        } throws: { error in
            guard case Gateway.StartError.contextFailed(let cause) = error else { return false }
            return cause == .address(host: "127.0.0.1", port: holder.port)
        }
        holder.stop()
    }
}
