import Foundation
import Testing

/// A client that floods the server without reading still learns, in order, what
/// it earned and why it was closed; nobody else notices.
@Suite("Floods")
struct FloodTests {
    /// Connects a raw peer to the lobby with the JSON subprotocol.
    static func flooder(_ server: TestServer, name: String = "mallory") throws -> RawSocket {
        let socket = try RawSocket(port: server.port)
        let head = try socket.upgrade(path: "/rooms/lobby?name=\(name)", protocolName: "cowatch.v1.json")
        guard head.hasPrefix("HTTP/1.1 101") else { throw TestFailure("upgrade refused: \(head)") }
        return socket
    }

    /// The event types of JSON frames, and the close frame as `close <code>`.
    static func summary(_ frames: [RawFrames.Frame]) -> [String] {
        frames.map { frame in
            if let code = frame.closeCode { return "close \(code)" }
            let type = frame.text.range(of: #""type":"([a-z-]+)""#, options: .regularExpression)
                .map { String(frame.text[$0].dropFirst(8).dropLast()) }
            return type ?? "?"
        }
    }

    @Test("2,000 /who written back to back without reading: the earned replies, rate-limited, then close 1008 with a reason")
    func floodWithoutReading() throws {
        // Tokens come back at 0.1 a second: however slowly a loaded machine gets
        // through the flood, the burst is all it earns.
        let server = try TestServer { $0.commandsPerSecond = 0.1 }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let mallory = try Self.flooder(server)
        let frame = RawFrames.maskedText("/who")
        // As fast as the socket takes them, reading nothing meanwhile.
        try mallory.write(Array((0..<2000).map { _ in frame }.joined()))
        let frames = RawFrames.parse(mallory.read(until: { RawFrames.parse($0).contains { $0.closeCode != nil } }))
        let kinds = Self.summary(frames)
        let burst = 40
        #expect(Array(kinds.prefix(2)) == ["welcome", "state"])
        #expect(kinds.dropFirst(2).prefix(burst).allSatisfy { $0 == "reply" }, "\(kinds)")
        #expect(Array(kinds.dropFirst(2 + burst)) == ["error", "close 1008"], "\(kinds)")
        #expect(frames.dropLast().last?.text.contains("\"code\":\"rate-limited\"") == true)
        #expect(frames.last?.closeReason.isEmpty == false)
        // The others carry on, and were never sent mallory's replies.
        alice.send("/who")
        #expect(alice.event("reply") != nil)
        try LimitsAndBadInputTests.othersCarryOn(server, alice)
        let metrics = try server.get("/metrics").body
        #expect(metrics.contains("cowatch_commands_total{command=\"who\"} \(burst + 1)"))
        #expect(!metrics.contains("cowatch_dropped_without_close_total{"))
    }

    @Test("a burst just over the limit gets the error and stays open")
    func justOver() throws {
        let server = try TestServer { $0.commandsPerSecond = 0.1 }
        defer { server.stop() }
        let mallory = try Self.flooder(server)
        try mallory.write(Array((0..<41).map { _ in RawFrames.maskedText("/who") }.joined()))
        let kinds = Self.summary(RawFrames.parse(mallory.read(until: { bytes in
            Self.summary(RawFrames.parse(bytes)).contains("error")
        })))
        #expect(kinds.last == "error" && !kinds.contains { $0.hasPrefix("close") }, "\(kinds)")
        #expect(kinds.filter { $0 == "reply" }.count == 40)
    }

    @Test("a flooder that stops after its close answers it; the close is counted once, by code")
    func closeHandshake() throws {
        let server = try TestServer()
        defer { server.stop() }
        let mallory = try Self.flooder(server)
        try mallory.write(Array((0..<200).map { _ in RawFrames.maskedText("/who") }.joined()))
        let kinds = Self.summary(RawFrames.parse(mallory.read(until: { RawFrames.parse($0).contains { $0.closeCode != nil } })))
        #expect(kinds.last == "close 1008")
        try mallory.write(RawFrames.maskedText("\u{3}\u{E8}", opcode: 8))
        #expect(mallory.isClosedByPeer(within: 3))
        let metrics = try server.get("/metrics").body
        #expect(metrics.contains("cowatch_closes_total{code=\"1008\",initiator=\"server\"} 1"))
        #expect(metrics.contains("cowatch_close_replies_missing_total 0"))
    }

    @Test("a message over the size limit closes with 1009 after what was already queued")
    func oversizeAfterQueued() throws {
        let server = try TestServer { $0.maximumMessageBytes = 1024 }
        defer { server.stop() }
        let mallory = try Self.flooder(server)
        try mallory.write(RawFrames.maskedText("/who") + RawFrames.maskedText(String(repeating: "x", count: 2000)))
        let kinds = Self.summary(RawFrames.parse(mallory.read(until: { RawFrames.parse($0).contains { $0.closeCode != nil } })))
        #expect(Array(kinds.suffix(2)) == ["reply", "close 1009"], "\(kinds)")
    }
}
