@testable import CowatchGateway
import Testing

/// The protocol decisions the libwebsockets layer used to take inline, as values.
@Suite("A client's close frame, read")
struct PeerCloseTests {
    static func read(_ bytes: [UInt8]) -> PeerClose {
        bytes.withUnsafeBytes { PeerClose.read($0) }
    }

    @Test("no payload is 1005; one byte is malformed")
    func short() {
        #expect(Self.read([]) == PeerClose(code: "1005", malformed: false))
        #expect(Self.read([0x03]) == PeerClose(code: "1005", malformed: true))
    }

    @Test("a code and a UTF-8 reason are taken as sent; a reason that is not UTF-8 is malformed")
    func codeAndReason() {
        #expect(Self.read([0x03, 0xE8] + Array("bye ✓".utf8)) == PeerClose(code: "1000", malformed: false))
        #expect(Self.read([0x0F, 0xA1]) == PeerClose(code: "4001", malformed: false))
        #expect(Self.read([0x03, 0xE8, 0xC3, 0x28]) == PeerClose(code: "1000", malformed: true))
    }

    @Test("a code of 5000 or more is no close code: it becomes 1002, in the frame the echo is made from")
    func outOfRange() {
        #expect(Self.read([0x13, 0x88]) == PeerClose(code: "1002", malformed: false, rewrite: (0x03, 0xEA)))
        #expect(Self.read([0xFF, 0xFF, 0x61]) == PeerClose(code: "1002", malformed: false, rewrite: (0x03, 0xEA)))
        #expect(Self.read([0x13, 0x87]).rewrite == nil)
    }
}

@Suite("Plain HTTP requests answered later")
struct DeferredAnswersTests {
    static let ok = HTTPResponse(status: 200, contentType: "text/plain", body: "x")

    @Test("a held request is answered on its socket once its answer is ready, and only once")
    func answered() {
        var answers = DeferredAnswers<Int>()
        let id = answers.nextID
        answers.hold(7, headOnly: true)
        #expect(answers.nextID == id + 1)
        #expect(answers.take(for: 7) == nil, "not ready yet")
        #expect(answers.answer(id, with: Self.ok) == 7)
        let taken = answers.take(for: 7)
        #expect(taken?.response.status == 200 && taken?.headOnly == true)
        #expect(answers.take(for: 7) == nil && answers.count == 0)
    }

    @Test("a socket that closes first is forgotten: its answer has nowhere to go")
    func socketClosedFirst() {
        var answers = DeferredAnswers<Int>()
        let id = answers.nextID
        answers.hold(7, headOnly: false)
        answers.forget(7)
        #expect(answers.answer(id, with: Self.ok) == nil)
        #expect(answers.count == 0)
    }
}
