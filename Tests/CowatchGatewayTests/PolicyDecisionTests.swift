import CowatchCore
@testable import CowatchGateway
import CowatchTime
import SlashCommands
import Testing

/// The gateway's policies as values (Sources/CowatchGateway/Decisions/):
/// which rooms lose chat, how a connection that fell behind is brought level,
/// and the words of a rate limit.
@Suite("The gateway's policies")
struct PolicyDecisionTests {
    static func room(_ name: String, _ bytes: Int, emptySince: Int64? = nil) -> ChatBudget.RoomChat {
        ChatBudget.RoomChat(room: RoomName(name)!, bytes: bytes, emptySince: emptySince.map { ServerInstant(milliseconds: $0) })
    }

    /// Carries cuts out on a table of figures, a room keeping its newest line of `line` bytes.
    static func budget(_ rooms: [ChatBudget.RoomChat], limit: Int, line: Int = 10) -> (cuts: [ChatBudget.Cut], kept: (Int, Int)?) {
        var bytes = Dictionary(uniqueKeysWithValues: rooms.map { ($0.room, $0.bytes) })
        var cuts: [ChatBudget.Cut] = []
        let kept = ChatBudget.keep(rooms, within: limit) { cut in
            cuts.append(cut)
            let (name, keep) = switch cut {
            case .forget(let name): (name, 0)
            case .halve(let name, let keeping): (name, keeping)
            }
            let now = bytes[name, default: 0]
            // Whole lines go: what is left is a multiple of the line, at least one line.
            let left = max(min(now, line), keep / line * line)
            bytes[name] = left
            return now - left
        }
        return (cuts, kept)
    }

    @Test("within the total, nothing is cut")
    func within() {
        let result = Self.budget([Self.room("a", 500), Self.room("b", 500)], limit: 1000)
        #expect(result.cuts.isEmpty && result.kept == nil)
    }

    @Test("empty rooms lose theirs first, the longest empty first, and only as many as needed")
    func emptyFirst() {
        let rooms = [Self.room("busy", 600), Self.room("late", 300, emptySince: 2000), Self.room("early", 300, emptySince: 1000),
                     Self.room("later", 300, emptySince: 3000)]
        let result = Self.budget(rooms, limit: 1000)
        #expect(result.cuts == [.forget(RoomName("early")!), .forget(RoomName("late")!)])
        #expect(result.kept.map { [$0.0, $0.1] } == [1500, 920])
    }

    @Test("then the largest history is halved until the total is within the limit")
    func halving() {
        let result = Self.budget([Self.room("a", 800), Self.room("b", 500)], limit: 600)
        #expect(result.cuts == [.halve(RoomName("a")!, keepingBytes: 400), .halve(RoomName("b")!, keepingBytes: 250),
                                .halve(RoomName("a")!, keepingBytes: 200)])
        #expect(result.kept.map { [$0.0, $0.1] } == [1300, 450])
    }

    @Test("a history down to its newest line is not cut forever")
    func stops() {
        let result = Self.budget([Self.room("a", 10)], limit: 5)
        #expect(result.cuts == [.halve(RoomName("a")!, keepingBytes: 5)])
        #expect(result.kept.map { [$0.0, $0.1] } == [10, 10])
    }

    @Test("a member who fell behind gets its room's state; through a link, the link's latest; a link is closed for its members to come back")
    func resynchronization() {
        #expect(Resynchronization.choose(relayedMember: false, isRelayLink: false) == .roomState)
        #expect(Resynchronization.choose(relayedMember: true, isRelayLink: false) == .latestFromLink)
        #expect(Resynchronization.choose(relayedMember: false, isRelayLink: true)
                == .closeLink(code: 4010, reason: "too far behind; reconnect now"))
    }

    @Test("a rate limit says the limit and that lines are lost")
    func rateLimitWords() {
        let error = RateLimitWarning.error(commandsPerSecond: 20)
        #expect(error.code == .rateLimited && error.command == nil)
        #expect(error.message == "slow down: at most 20 commands per second; lines are being dropped")
        #expect(RateLimitWarning.error(commandsPerSecond: 2.5).message.hasPrefix("slow down: at most 2.5 commands per second"))
    }
}
