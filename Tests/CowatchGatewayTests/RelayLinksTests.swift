@testable import CowatchGateway
import CowatchCore
import CowatchTime
import Testing

/// A relaying node's shared links (`Sources/CowatchGateway/Cluster/RelayLinks.swift`):
/// one per room and owner, who is on each, and what reaches whom.
@Suite("Shared relay links")
struct RelayLinksTests {
    static let lobby = RoomName("lobby")!
    static let den = RoomName("den")!
    static let owner = "ws://127.0.0.1:7481"

    static func upgrade(_ encoding: RelayEncoding = .json, name: String = "m") -> RelayedUpgrade {
        RelayedUpgrade(encoding: encoding, address: "192.0.2.1", name: name, resume: nil, player: false, join: true,
                       owner: nil, device: nil, invite: nil, password: nil, token: nil, create: nil)
    }

    /// Links with `members` of the lobby on one open link, each answered by the owner.
    static func joined(_ members: [(UInt64, RelayEncoding)]) -> RelayLinks {
        var links = RelayLinks()
        for (connection, encoding) in members { _ = links.relay(connection, upgrade(encoding), room: lobby, url: owner) }
        _ = links.opened(1)
        for number in 1...RelayNumber(members.count) { _ = links.received(.joined(number), on: 1) }
        return links
    }

    @Test("the first member of a room opens one link to its owner; the next ones wait on the same link")
    func oneLinkPerRoomAndOwner() {
        var links = RelayLinks()
        #expect(links.relay(10, Self.upgrade(), room: Self.lobby, url: Self.owner) == [.open(1, room: Self.lobby, url: Self.owner)])
        #expect(links.relay(11, Self.upgrade(), room: Self.lobby, url: Self.owner) == [])
        #expect(links.relay(12, Self.upgrade(), room: Self.den, url: Self.owner) == [.open(2, room: Self.den, url: Self.owner)])
        #expect(links.relay(13, Self.upgrade(), room: Self.lobby, url: "ws://127.0.0.1:7482")
            == [.open(3, room: Self.lobby, url: "ws://127.0.0.1:7482")])
        #expect(links.links.count == 3 && links.relayedMembers == 4)
    }

    @Test("when the link opens its members join in the order they came, and their lines go up after")
    func joinsOnOpen() {
        var links = RelayLinks()
        _ = links.relay(10, Self.upgrade(name: "a"), room: Self.lobby, url: Self.owner)
        _ = links.relay(11, Self.upgrade(.text, name: "b"), room: Self.lobby, url: Self.owner)
        #expect(links.opened(1) == [.send(1, .join(1, Self.upgrade(name: "a"))), .relaying(10, 1, 1),
                                    .send(1, .join(2, Self.upgrade(.text, name: "b"))), .relaying(11, 1, 2)])
        #expect(links.relay(12, Self.upgrade(name: "c"), room: Self.lobby, url: Self.owner)
            == [.send(1, .join(3, Self.upgrade(name: "c"))), .relaying(12, 1, 3)])
    }

    @Test("a frame for everyone reaches the members of its encoding whom the owner answered, but the one excepted")
    func everyone() {
        var links = Self.joined([(10, .json), (11, .json), (12, .text)])
        _ = links.relay(13, Self.upgrade(), room: Self.lobby, url: Self.owner)
        let payload = Array("{}".utf8)
        // 13's join is not answered yet: a broadcast made before the owner knew of it is not its.
        // Members are kept by number in a dictionary: the order of delivery is not a rule.
        guard case .deliver(let delivered, let recipients)? = links.received(.frame(.everyone(.json, except: nil), payload), on: 1)?.first
        else {
            Issue.record("nothing delivered")
            return
        }
        #expect(delivered == payload && Set(recipients) == [10, 11] && recipients.count == 2)
        #expect(links.received(.frame(.everyone(.json, except: 1), payload), on: 1) == [.deliver(payload, to: [11])])
        #expect(links.received(.frame(.everyone(.text, except: nil), payload), on: 1) == [.deliver(payload, to: [12])])
        #expect(links.received(.frame(.member(4), payload), on: 1) == nil)
        _ = links.received(.joined(4), on: 1)
        #expect(links.received(.frame(.member(4), payload), on: 1) == [.deliver(payload, to: [13])])
    }

    @Test("the owner's close of one member closes that member alone; the last one gone closes the link")
    func closeOne() {
        var links = Self.joined([(10, .json), (11, .json)])
        #expect(links.received(.close(1, code: 4001, reason: "kicked"), on: 1) == [.closeMember(10, code: 4001, reason: "kicked")])
        #expect(links.gone(11, leaving: true) == [.send(1, .gone(2, leaving: true)), .close(1)])
        #expect(links.links.isEmpty && links.relayedMembers == 0)
        // A frame still on its way for a member gone is nobody's.
        #expect(links.received(.frame(.member(2), []), on: 1) == [])
    }

    @Test("a member gone before its link opened is forgotten without a word to the owner")
    func goneWhilePending() {
        var links = RelayLinks()
        _ = links.relay(10, Self.upgrade(), room: Self.lobby, url: Self.owner)
        _ = links.relay(11, Self.upgrade(), room: Self.lobby, url: Self.owner)
        #expect(links.gone(10, leaving: false) == [])
        #expect(links.opened(1) == [.send(1, .join(2, Self.upgrade())), .relaying(11, 1, 2)])
    }

    @Test("a link that never opened sends its members back to be placed; one that did closes them, 4010 unless its code says more")
    func linkClosed() {
        var pending = RelayLinks()
        _ = pending.relay(10, Self.upgrade(), room: Self.lobby, url: Self.owner)
        #expect(pending.closed(1, code: nil, reason: "refused", movedCode: Gateway.relayCloseMeansMoved) == [.placeAgain(10)])
        var moved = Self.joined([(10, .json), (11, .text)])
        #expect(moved.closed(1, code: 1001, reason: "", movedCode: Gateway.relayCloseMeansMoved) == [
            .closeMember(10, code: 4010, reason: "the room moved to another node; reconnect now"),
            .closeMember(11, code: 4010, reason: "the room moved to another node; reconnect now")])
        var refused = Self.joined([(10, .json)])
        #expect(refused.closed(1, code: 1008, reason: "bad", movedCode: Gateway.relayCloseMeansMoved)
            == [.closeMember(10, code: 1008, reason: "bad")])
        // The next member of the room opens a new link.
        #expect(refused.relay(12, Self.upgrade(), room: Self.lobby, url: Self.owner) == [.open(2, room: Self.lobby, url: Self.owner)])
    }

    @Test("the owner answering a member twice, or a frame for one not answered, is a broken link")
    func brokenLink() {
        var links = Self.joined([(10, .json)])
        #expect(links.received(.joined(1), on: 1) == nil)
    }

    @Test("a member's round trip goes up once the owner has it")
    func roundTrip() {
        var links = RelayLinks()
        _ = links.relay(10, Self.upgrade(), room: Self.lobby, url: Self.owner)
        #expect(links.roundTrip(10, milliseconds: 30) == [])
        _ = links.opened(1)
        _ = links.received(.joined(1), on: 1)
        #expect(links.roundTrip(10, milliseconds: 30) == [.send(1, .roundTrip(1, milliseconds: 30))])
    }

    @Test("the room's latest state, per encoding, is kept for a member that falls behind; none before one came")
    func latestState() {
        var links = Self.joined([(10, .json), (11, .text)])
        #expect(links.latestState(for: 10) == nil)
        #expect(links.askForState(10) == [.send(1, .resynchronize(1))])
        let first = Array("{\"seq\":1}".utf8), second = Array("{\"seq\":2}".utf8), line = Array("= paused".utf8)
        #expect(links.received(.frame(.everyoneState(.json, except: nil), first), on: 1) == [.deliver(first, to: [10])])
        _ = links.received(.frame(.everyone(.json, except: nil), Array("{}".utf8)), on: 1)
        _ = links.received(.frame(.everyoneState(.json, except: 1), second), on: 1)
        _ = links.received(.frame(.everyoneState(.text, except: nil), line), on: 1)
        #expect(links.latestState(for: 10) == second)
        #expect(links.latestState(for: 11) == line)
        #expect(links.latestState(for: 99) == nil)
    }

    @Test("a quiet link is pinged after a quarter of the timeout, once; one not heard from for the whole timeout is given up, its members told to reconnect")
    func silentLink() {
        var links = RelayLinks(timeout: .seconds(8))
        _ = links.relay(10, Self.upgrade(), room: Self.lobby, url: Self.owner)
        let start = MonotonicInstant(microseconds: 1_000_000)
        #expect(links.tick(at: start + .seconds(100)) == [])
        links.heard(1, at: start)
        _ = links.opened(1)
        #expect(links.tick(at: start + .milliseconds(1999)) == [])
        #expect(links.tick(at: start + .seconds(2)) == [.send(1, .ping)])
        #expect(links.tick(at: start + .seconds(3)) == [])
        links.heard(1, at: start + .seconds(3))
        #expect(links.tick(at: start + .seconds(5)) == [.send(1, .ping)])
        #expect(links.tick(at: start + .seconds(11)) == [
            .close(1), .closeMember(10, code: 4010, reason: "the room moved to another node; reconnect now")])
        #expect(links.links.isEmpty && links.relayedMembers == 0)
    }
}
