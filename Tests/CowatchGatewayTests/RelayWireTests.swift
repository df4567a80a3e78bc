@testable import CowatchGateway
import Testing

/// The messages of a shared relay link (`Sources/CowatchGateway/Cluster/RelayWire.swift`).
@Suite("A shared relay link's messages")
struct RelayWireTests {
    static let upgrade = RelayedUpgrade(encoding: .text, address: "192.0.2.7", name: "bob", resume: "abc", player: true,
                                        join: false, owner: nil, device: "d1", invite: nil, password: "p w", token: nil,
                                        create: nil)

    @Test("every message up reads back as it was written, a member's bytes untouched")
    func upRoundTrip() {
        let messages: [RelayUp] = [
            .join(7, Self.upgrade), .message(7, Array("/seek 1:00\nhello\n".utf8)), .message(1, []),
            .gone(7, leaving: true), .gone(8, leaving: false), .roundTrip(3, milliseconds: 42), .resynchronize(5), .ping,
        ]
        for message in messages { #expect(RelayWire.decodeUp(RelayWire.encode(message)) == message) }
    }

    @Test("every message down reads back as it was written, a close's reason with its spaces and an empty one")
    func downRoundTrip() {
        let messages: [RelayDown] = [
            .joined(4), .frame(.member(4), Array("{\"type\":\"welcome\"}".utf8)),
            .frame(.everyone(.json, except: nil), Array("{}\n{}".utf8)), .frame(.everyone(.text, except: 9), Array("= paused".utf8)),
            .frame(.everyoneState(.json, except: nil), Array("{\"type\":\"state\"}".utf8)),
            .frame(.everyoneState(.text, except: 2), Array("= playing".utf8)),
            .close(4, code: 4001, reason: "kicked by host: enough of that"), .close(5, code: 4010, reason: ""), .pong,
        ]
        for message in messages { #expect(RelayWire.decodeDown(RelayWire.encode(message)) == message) }
    }

    @Test("a close's reason is one line of at most 123 bytes")
    func closeReasonBounded() {
        let long = String(repeating: "é", count: 100) + "\nsecond line"
        guard case .close(_, _, let reason)? = RelayWire.decodeDown(RelayWire.encode(.close(1, code: 1008, reason: long))) else {
            Issue.record("not read back")
            return
        }
        #expect(reason.utf8.count <= 123 && !reason.contains("second"))
    }

    @Test("what is malformed is refused: unknown words, missing numbers or bodies, a header too long")
    func malformed() {
        for text in ["", "hello 1", "join 1", "join x\n{}", "join 1\n{not json", "line 1", "gone 1", "gone 1 2", "rtt 1 -5",
                     "line  1\nx", "line \(String(repeating: "9", count: 200))\nx"] {
            #expect(RelayWire.decodeUp(Array(text.utf8)) == nil, "\(text)")
        }
        for text in ["", "to 1", "to x\nbody", "all\nbody", "all xml\nbody", "all json", "all json y\nbody", "state\nbody", "state json", "joined",
                     "joined 1\nbody", "close 1", "close 1 99999 reason"] {
            #expect(RelayWire.decodeDown(Array(text.utf8)) == nil, "\(text)")
        }
    }
}
