@testable import CowatchGateway
import Testing

/// Resume tokens and owner keys (`Gateway.newToken`): 128 random bits each.
@Suite("Tokens")
struct TokenTests {
    /// Gives the numbers it was made with, in order.
    struct Replay: RandomNumberGenerator {
        var numbers: [UInt64]
        mutating func next() -> UInt64 { numbers.isEmpty ? 0 : numbers.removeFirst() }
    }

    @Test("each half of a token keeps its 16 digits: draws of 1 and 0x23 are not those of 0x12 and 3")
    func halvesArePadded() {
        var first = Replay(numbers: [1, 0x23])
        var second = Replay(numbers: [0x12, 3])
        let a = Gateway.newToken(using: &first)
        let b = Gateway.newToken(using: &second)
        #expect(a == "0000000000000001" + "0000000000000023")
        #expect(a != b)
    }

    @Test("a token is 32 lower-case hex digits")
    func shape() {
        for _ in 0..<100 {
            let token = Gateway.newToken()
            #expect(token.count == 32)
            #expect(token.allSatisfy { $0.isHexDigit && !$0.isUppercase })
        }
    }
}
