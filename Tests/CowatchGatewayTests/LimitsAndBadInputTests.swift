import CowatchClient
import Foundation
import Testing

/// Bad input gets a clear answer and loses nothing for anyone else.
@Suite("Limits and bad input")
struct LimitsAndBadInputTests {
    /// After `victim` is dealt with, `witness` still chats with a third member.
    static func othersCarryOn(_ server: TestServer, _ witness: TestMember) throws {
        let carol = try server.join(name: "carol")
        carol.send("still fine")
        #expect(witness.event("chat") { $0.string("text") == "still fine" } != nil)
    }

    @Test("a binary message closes with 1003")
    func binary() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let mallory = try server.join(name: "mallory")
        mallory.sendBytes([1, 2, 3], binary: true)
        #expect(mallory.waitClosed()?.code == 1003)
        try Self.othersCarryOn(server, alice)
    }

    @Test("invalid UTF-8 closes with 1007")
    func invalidUTF8() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let mallory = try server.join(name: "mallory")
        mallory.sendBytes([0x68, 0x69, 0xC3, 0x28], binary: false)
        #expect(mallory.waitClosed()?.code == 1007)
        try Self.othersCarryOn(server, alice)
    }

    @Test("the welcome tells a client the line and message limits it must keep under")
    func welcomeAnnouncesLimits() throws {
        let server = try TestServer { $0.maximumLineBytes = 1000; $0.maximumMessageBytes = 3000 }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let welcome = try #require(alice.allFrames.first)
        #expect(welcome.contains("\"limits\":{\"lineBytes\":1000,\"messageBytes\":3000}"))
    }

    @Test("a message over the size limit closes with 1009")
    func oversize() throws {
        let server = try TestServer { $0.maximumMessageBytes = 1024 }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let mallory = try server.join(name: "mallory")
        mallory.send(String(repeating: "x", count: 1025))
        #expect(mallory.waitClosed()?.code == 1009)
        try Self.othersCarryOn(server, alice)
        let metrics = try server.get("/metrics").body
        #expect(metrics.contains("cowatch_closes_total{code=\"1009\",initiator=\"server\"} 1"))
    }

    @Test("too many commands: first an error rate-limited, then close 1008")
    func rateLimit() throws {
        let server = try TestServer {
            $0.commandsPerSecond = 1
            $0.commandBurst = 3
            $0.rateLimitGrace = 5
        }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let mallory = try server.join(name: "mallory")
        mallory.send((1...4).map { "spam \($0)" }.joined(separator: "\n"))
        #expect(mallory.error()?.string("code") == "rate-limited")
        mallory.send((1...10).map { "more \($0)" }.joined(separator: "\n"))
        #expect(mallory.waitClosed()?.code == 1008)
        #expect(alice.allFrames.allSatisfy { !$0.contains("more ") })
        try Self.othersCarryOn(server, alice)
    }

    @Test("lines ended by CRLF in one message are each handled, as with LF")
    func crlfLines() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        alice.send("/who\r\nhello there\r\n")
        #expect(alice.event("reply") != nil)
        #expect(alice.event("chat") { $0.string("text") == "hello there" } != nil)
        #expect(try #require(alice.untilRoundTrip()).allSatisfy { $0.string("type") != "error" })
    }

    @Test("a full room refuses a newcomer with room-full and close 1008")
    func roomFull() throws {
        let server = try TestServer { $0.room.maximumMembers = 2 }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob")
        let late = server.open("/rooms/lobby?name=late")
        #expect(late.error()?.string("code") == "room-full")
        #expect(late.waitClosed()?.code == 1008)
        alice.send("still two of us")
        #expect(bob.event("chat") { $0.string("text") == "still two of us" } != nil)
    }

    @Test("the server's room limit refuses a new room but not the existing ones")
    func roomLimit() throws {
        let server = try TestServer { $0.maximumRooms = 1 }
        defer { server.stop() }
        let alice = try server.join("first", name: "alice")
        let other = server.open("/rooms/second?name=bob")
        #expect(other.error()?.string("code") == "room-full")
        #expect(other.waitClosed()?.code == 1008)
        let bob = try server.join("first", name: "bob")
        bob.send("hi")
        #expect(alice.event("chat") { $0.string("text") == "hi" } != nil)
    }

    @Test("connections per address are limited before the upgrade")
    func perAddress() throws {
        let server = try TestServer { $0.maximumConnectionsPerAddress = 2 }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        _ = try server.join(name: "bob")
        let third = server.open("/rooms/lobby?name=third")
        let closed = try #require(third.waitClosed())
        #expect(closed.code == nil)
        let socket = try RawSocket(port: server.port)
        #expect(try socket.upgrade(path: "/rooms/lobby").hasPrefix("HTTP/1.1 429 "))
        alice.send("/who")
        #expect(alice.event("reply") != nil)
    }

    @Test("a member that cannot keep up is sent the latest state instead of a backlog, then closed with 1008")
    func slowConsumer() throws {
        let server = try TestServer {
            $0.outboxLimit = 64
            $0.stuckTimeout = .seconds(1)
            $0.shutdownGrace = .seconds(1)
            $0.commandsPerSecond = 100_000
            $0.commandBurst = 100_000
        }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let slow = try RawSocket(port: server.port, receiveBuffer: 4096)
        #expect(try slow.upgrade(path: "/rooms/lobby?name=slow", protocolName: "cowatch.v1.json").hasPrefix("HTTP/1.1 101"))
        // More than the kernel's socket buffers (4 MiB here) can absorb, each
        // message sent once alice has read the one before back: only the member
        // who reads nothing falls behind.
        let chunk = String(repeating: "y", count: 4000)
        for _ in 0..<1500 {
            alice.send((0..<2).map { _ in chunk }.joined(separator: "\n"))
            guard alice.event("chat") != nil, alice.event("chat") != nil else {
                Issue.record("alice did not read her own lines back")
                return
            }
        }
        // Its outbox has overflowed for longer than stuck-timeout: the next
        // housekeeping closes it (1008); its close frame cannot go out behind
        // what it does not read, so after close-reply-timeout it is let go.
        try server.skip(.seconds(2))
        #expect(try server.get("/metrics").body.contains("cowatch_closes_total{code=\"1008\",initiator=\"server\"}"))
        try server.skip(.seconds(6))
        #expect(slow.isClosedByPeer(within: 10))
        let metrics = try server.get("/metrics").body
        #expect(!metrics.contains("cowatch_outbox_resyncs_total 0"), "\(metrics.split(separator: "\n").filter { $0.hasPrefix("cowatch_") && !$0.contains("bucket") })")
        #expect(metrics.contains("cowatch_closes_total{code=\"1008\",initiator=\"server\"}"))
        // The room carries on for everyone who reads (the flooder may itself have
        // fallen behind on a loaded machine, so fresh members check).
        let dave = try server.join(name: "dave")
        try Self.othersCarryOn(server, dave)
    }

    @Test("a connection that answers no pings is closed as idle with 1001, after its pings")
    func idle() throws {
        let server = try TestServer {
            $0.pingInterval = .milliseconds(200)
            $0.idleTimeout = .milliseconds(2500)
            $0.closeReplyTimeout = .seconds(1)
        }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let silent = try RawSocket(port: server.port)
        #expect(try silent.upgrade(path: "/rooms/lobby?name=silent").hasPrefix("HTTP/1.1 101"))
        let frames = RawFrames.parse(silent.readAll(timeout: 8))
        #expect(frames.contains { $0.opcode == 9 })
        #expect(frames.last?.closeCode == 1001, "\(frames.map(\.opcode))")
        alice.send("/who")
        #expect(alice.event("reply") != nil)
    }
}
