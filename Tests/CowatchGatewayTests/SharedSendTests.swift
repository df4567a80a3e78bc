import CowatchClient
@testable import CowatchGateway
import CowatchTime
import Foundation
import Testing

@Suite("Writes shared with the send threads")
struct SendClaimsTests {
    @Test("threads take what is published, a chunk at a time, in order, and nothing beyond it")
    func claimsInOrder() {
        var claims = SendClaims(chunk: 3)
        claims.begin()
        #expect(claims.claim() == nil)
        claims.publish(upTo: 4)
        #expect(claims.claim() == 0..<3)
        #expect(claims.claim() == 3..<4)
        #expect(claims.claim() == nil)
        claims.publish(upTo: 2)
        #expect(claims.published == 4, "a count never shrinks within a flush")
        claims.publish(upTo: 5)
        #expect(claims.claim() == 4..<5)
    }

    @Test("a flush is finished once sealed and every write claimed is made, whoever made it")
    func finishedWhenSealedAndDone() {
        var claims = SendClaims(chunk: 2)
        claims.begin()
        claims.publish(upTo: 3)
        let first = claims.claim()
        let second = claims.claim()
        #expect(!claims.isFinished)
        if let second { claims.complete(second) }
        claims.seal()
        #expect(!claims.isFinished, "a write claimed and not yet made holds the flush")
        if let first { claims.complete(first) }
        #expect(claims.isFinished)
        claims.publish(upTo: 9)
        #expect(claims.published == 3, "nothing is published after the seal")
        claims.begin()
        #expect(claims == SendClaims(chunk: 2))
    }

    @Test("an empty flush is finished once sealed")
    func emptyFlush() {
        var claims = SendClaims(chunk: 8)
        claims.begin()
        #expect(!claims.isFinished)
        claims.seal()
        #expect(claims.isFinished)
    }

    @Test("without a configured count, one thread fewer than the cores, at most four")
    func automaticThreads() {
        #expect(SendThreads.automatic(cores: 1) == 0)
        #expect(SendThreads.automatic(cores: 2) == 1)
        #expect(SendThreads.automatic(cores: 4) == 3)
        #expect(SendThreads.automatic(cores: 16) == 4)
    }

    @Test("what send returned: whole, a rest for the library to buffer, or a failed socket")
    func outcomes() {
        #expect(SendOutcome.of(sent: 520, error: 0, length: 520) == .whole)
        #expect(SendOutcome.of(sent: 100, error: 0, length: 520) == .rest(from: 100))
        #expect(SendOutcome.of(sent: 0, error: 0, length: 520) == .rest(from: 0))
        #expect(SendOutcome.of(sent: -1, error: EAGAIN, length: 520) == .rest(from: 0))
        #expect(SendOutcome.of(sent: -1, error: EINTR, length: 520) == .rest(from: 0))
        #expect(SendOutcome.of(sent: -1, error: EPIPE, length: 520) == .failed)
        #expect(SendOutcome.of(sent: -1, error: ECONNRESET, length: 520) == .failed)
    }
}

@Suite("When writes leave")
struct WriteGatheringTests {
    let start = MonotonicInstant(microseconds: 1_000_000)

    @Test("outside a turn of the loop, an event's writes leave after it")
    func outsideATurn() {
        var gathering = WriteGathering(delay: .milliseconds(1))
        gathering.asked(at: start)
        #expect(gathering.flushesAfterEvent(now: start))
    }

    @Test("within a turn, writes wait for the events after theirs until the first has waited the delay")
    func withinATurn() {
        var gathering = WriteGathering(delay: .milliseconds(1))
        gathering.turnBegins()
        #expect(!gathering.flushesAfterEvent(now: start), "nothing waits")
        gathering.asked(at: start)
        gathering.asked(at: start + MonotonicDuration(microseconds: 900))
        #expect(!gathering.flushesAfterEvent(now: start + MonotonicDuration(microseconds: 999)))
        #expect(gathering.flushesAfterEvent(now: start + .milliseconds(1)), "timed from the first write asked for")
        gathering.flushed()
        #expect(!gathering.flushesAfterEvent(now: start + .milliseconds(5)))
        gathering.turnEnds()
        #expect(gathering.flushesAfterEvent(now: start + .milliseconds(5)))
    }

    @Test("a delay of zero makes each event's writes at once")
    func noDelay() {
        var gathering = WriteGathering(delay: .zero)
        gathering.turnBegins()
        gathering.asked(at: start)
        #expect(gathering.flushesAfterEvent(now: start))
    }
}

@Suite("Broadcasts shared with the send threads, end to end", .serialized)
struct SharedSendEndToEndTests {
    @Test("every member takes every frame whole and in order, one whose socket fills included")
    func everyFrameWholeAndInOrder() throws {
        let server = try TestServer {
            $0.sendThreads = 2
            // Every broadcast of this small room is shared.
            $0.sendThreadsFrom = 2
            $0.commandsPerSecond = 1_000_000
            $0.commandBurst = 1_000_000
            // Nothing queued for the member who stops reading is dropped or resynchronized.
            $0.outboxLimit = 1_000_000
            $0.stuckTimeout = .seconds(600)
        }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob")
        let slow = try RawSocket(port: server.port, receiveBuffer: 4096)
        #expect(try slow.upgrade(path: "/rooms/lobby?name=slow", protocolName: "cowatch.v1.json").hasPrefix("HTTP/1.1 101"))
        try #require(alice.event("participant") { $0.object("participant")?.string("name") == "slow" } != nil)

        // More than the kernel's buffers for the member who does not read (its
        // receive buffer 4 KiB, the server's send buffer up to 4 MiB): at some
        // broadcast its socket takes part of a frame or none, and the rest goes
        // through the library while the others' writes go on.
        let lines = 2_000
        let body = String(repeating: "z", count: 3_900)
        for index in 0..<lines {
            alice.send("\(index) \(body)")
            guard alice.event("chat", where: { $0.string("text")?.hasPrefix("\(index) ") == true }) != nil else {
                Issue.record("alice did not read line \(index) back")
                return
            }
        }
        alice.send("last")
        let metrics = try server.get("/metrics").body
        func counter(_ name: String) -> Int? {
            metrics.split(separator: "\n").first { $0.hasPrefix(name + " ") }.flatMap { Int($0.dropFirst(name.count + 1)) }
        }
        #expect((counter("cowatch_shared_writes_cut_total") ?? 0) > 0, "the socket that filled left a shared write to the library")
        #expect((counter("cowatch_shared_flushes_total") ?? 0) > 0)

        let bytes = slow.read(until: { received in
            String(decoding: received.suffix(64), as: UTF8.self).contains("\"last\"")
        }, timeout: 60)
        let chats = RawFrames.parse(bytes).compactMap { frame -> String? in
            guard frame.opcode == 1, let object = JSONObject(frame.text), object.string("type") == "chat" else { return nil }
            return object.string("text")
        }
        #expect(chats.count == lines + 1)
        #expect(chats.dropLast().enumerated().allSatisfy { $0.element == "\($0.offset) \(body)" }, "every line whole and in order")
        #expect(chats.last.map { $0 == "last" } == true, "the last line last")

        for index in 0..<lines {
            guard bob.event("chat", where: { $0.string("text") == "\(index) \(body)" }) != nil else {
                Issue.record("bob did not get line \(index) in order")
                return
            }
        }
    }
}
