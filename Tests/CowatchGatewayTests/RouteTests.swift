@testable import CowatchGateway
import Testing

/// A connection's held lines (`Sources/CowatchGateway/Decisions/Route.swift`): one bounded
/// queue, whatever holds them.
@Suite("Held lines")
struct HeldLinesTests {
    static func text(_ line: HeldLine) -> String {
        if case .message(let bytes) = line { String(decoding: bytes, as: UTF8.self) } else { "parsed" }
    }

    @Test("lines are held up to the limit; the next is refused, the held ones kept in order")
    func bound() {
        var held = HeldLines(limit: 2)
        let answers = ["a", "b", "c"].map { held.hold(.message(Array($0.utf8))) }
        #expect(answers == [true, true, false])
        let taken = held.takeAll().map(Self.text)
        #expect(taken == ["a", "b"])
        #expect(held.isEmpty)
    }

    @Test("lines taken out and not passed on go back after those their passing on held")
    func restore() {
        var held = HeldLines(limit: 2)
        _ = held.hold(.message(Array("later".utf8)))
        held.restore([.message(Array("rest".utf8))])
        let taken = held.takeAll().map(Self.text)
        #expect(taken == ["later", "rest"])
    }

    @Test("each route says whether, and why, it holds lines")
    func routes() {
        #expect(Route.local.holdsBecause == nil)
        #expect(Route.checking(Gateway.PendingMediaCheck(input: .empty, address: "a")).holdsBecause == "a link is checked")
    }
}
