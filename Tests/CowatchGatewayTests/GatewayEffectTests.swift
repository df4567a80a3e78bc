@testable import CowatchGateway
import CowatchClient
import CowatchCore
@testable import CowatchStore
import CowatchTime
import Testing

/// What an event does, read as values (`GatewayEffect`) from a gateway with no
/// socket, no database and no other node (`EffectDesk`): the paths where order
/// and completeness matter most, each as "this event, in this state, yields
/// these effects".
@Suite("An event's effects, as values")
struct GatewayEffectTests {
    static let lobby = RoomName("lobby")!

    @Test("a command's broadcast: one frame per encoding, queued on every member, and the room's change written")
    func commandBroadcast() throws {
        let desk = EffectDesk()
        let (alice, _) = desk.connect("alice")
        let (bob, _) = desk.connect("bob")
        let (carol, _) = desk.connect("carol", encoding: .text)
        _ = desk.say("/watch https://example.com/a.mp4", on: alice)
        _ = (desk.written(alice), desk.written(bob), desk.written(carol))

        let effects = desk.say("/play", on: alice)
        #expect(desk.lines(effects) == [
            "broadcast state to c1,c2,c3", "arm room timers", "broadcast notice to c1,c2,c3", "store room",
            "write c1", "write c2", "write c3",
        ])
        guard case .broadcast(.some, let text, let recipients) = effects.first else {
            Issue.record("no broadcast first")
            return
        }
        #expect(recipients.count == 3 && !text.isEmpty)
        // The same JSON frame for both JSON members: encoded once.
        #expect(alice.state.nextWrite(budget: 1 << 20, now: desk.time.monotonic()) == bob.state.nextWrite(budget: 1 << 20, now: desk.time.monotonic()))
        // The one write held everything the event queued, in order.
        #expect(desk.written(carol).count >= 2)
    }

    @Test("a kick: the room is told, the member's connection gets it and then its close, and the store forgets it")
    func kick() {
        let desk = EffectDesk()
        let (alice, _) = desk.connect("alice")
        let (bob, _) = desk.connect("bob")
        _ = (desk.written(alice), desk.written(bob))

        let effects = desk.say("/kick bob", on: alice)
        #expect(desk.lines(effects) == [
            "send notice to c1", "broadcast participant-left to c1,c2", "close c2 4001", "broadcast notice to c1",
            // The second write is the close's, asked for while the first is still queued.
            "store forgetMember,room", "write c1", "write c2", "write c2",
        ])
        #expect(desk.written(bob) == ["participant-left", "close 4001"])
        #expect(desk.gateway.rooms[Self.lobby]?.connections.count == 1)
        #expect(bob.member == nil)
    }

    @Test("a room held while the database is away: its members are told, a change is refused in words and nothing is written")
    func heldRoom() {
        let desk = EffectDesk(node: "n1")
        let (alice, placing) = desk.connect("alice")
        #expect(desk.lines(placing) == ["acquire lease lobby"])
        let owned = desk.event { $0.placed(Self.lobby, .owned(epoch: 7, seqFloor: 0, ceiling: 10_000, room: nil,
                                                               requestedAt: desk.time.monotonic())) }
        #expect(desk.lines(owned) == ["renew leases ", "own lobby 7", "renew leases lobby", "send welcome to c1",
                                      "send state to c1", "store member,room", "write c1"])
        let (bob, _) = desk.connect("bob")
        _ = (desk.written(alice), desk.written(bob))

        let failed = desk.event {
            $0.renewed(PostgresLeases.Renewal(sentAt: desk.time.monotonic(), held: nil, asked: [], took: .milliseconds(5)))
        }
        #expect(failed.isEmpty, "a failed heartbeat changes nothing until the lease's trust lapses")
        desk.time.advance(.seconds(3))
        let held = desk.lines(desk.event { $0.housekeeping() })
        #expect(held.contains("send notice to c1") && held.contains("send notice to c2"))
        #expect(!held.contains { $0.hasPrefix("store member") || $0.hasPrefix("store room") || $0.hasPrefix("disown") })
        _ = (desk.written(alice), desk.written(bob))

        #expect(desk.lines(desk.say("/play", on: alice)) == ["send error to c1", "write c1"])
        #expect(desk.written(alice) == ["error"])
        #expect(desk.written(bob).isEmpty)

        desk.time.advance(.seconds(1))
        let back = desk.event {
            $0.renewed(PostgresLeases.Renewal(sentAt: desk.time.monotonic(), held: [Self.lobby: 7], asked: [], took: .milliseconds(5)))
        }
        #expect(desk.lines(back) == ["send notice to c1", "send notice to c2", "write c1", "write c2"])
    }

    @Test("a hand-over: queued writes flushed, then each lease released, then every member told to reconnect")
    func handOver() {
        let desk = EffectDesk(node: "n1")
        let (alice, _) = desk.connect("alice")
        desk.event { $0.placed(Self.lobby, .owned(epoch: 7, seqFloor: 0, ceiling: 10_000, room: nil, requestedAt: desk.time.monotonic())) }
        let (bob, _) = desk.connect("bob")
        _ = (desk.written(alice), desk.written(bob))

        let lines = desk.lines(desk.event { $0.beginShutdown() })
        #expect(Array(lines.prefix(7)) == ["flush store", "disown lobby", "release lease lobby 7", "renew leases ", "stop leases",
                                           "close c1 4010", "close c2 4010"])
        #expect(desk.written(alice) == ["close 4010"])
        #expect(desk.written(bob).last == "close 4010")
    }

    @Test("a relay link lost: the members it carried are told to reconnect, and a lost link that never opened places them again")
    func relayLinkLost() throws {
        let desk = EffectDesk(node: "n2")
        let (alice, _) = desk.connect("alice")
        let relayed = desk.event { $0.placed(Self.lobby, .elsewhere(node: "n1", url: "ws://127.0.0.1:9/")) }
        let lines = desk.lines(relayed)
        #expect(lines == ["open relay 1 to 127.0.0.1:9"])
        guard case .openRelay(let link, _, _) = relayed.first else { return }
        // Lines sent meanwhile wait for the link.
        #expect(desk.say("hello", on: alice).isEmpty)

        let opened = desk.event { $0.relayOpened(link) }
        #expect(desk.lines(opened) == ["relay \(link) join", "relay \(link) message"])
        guard case .relaySend(_, .join(let number, _)) = opened.first else { return }
        #expect(desk.event { $0.relayReceived(link, String(decoding: RelayWire.encode(.joined(number)), as: UTF8.self)) }.isEmpty)
        #expect(desk.lines(desk.say("/play", on: alice)) == ["relay \(link) message"])

        let lost = desk.event { $0.relayClosed(link, CloseInfo(code: nil, reason: "")) }
        #expect(desk.lines(lost) == ["close c1 4010", "write c1"])
        #expect(desk.written(alice) == ["close 4010"])

        // A second member, whose link dies before it opens: placed again, its lines still held.
        let (bob, _) = desk.connect("bob")
        let again = desk.event { $0.placed(Self.lobby, .elsewhere(node: "n1", url: "ws://127.0.0.1:9/")) }
        guard case .openRelay(let second, _, _) = again.first else {
            Issue.record("no second link: \(desk.lines(again))")
            return
        }
        #expect(desk.event { $0.relayClosed(second, CloseInfo(code: nil, reason: "")) }.isEmpty)
        desk.time.advance(.milliseconds(300))
        #expect(desk.lines(desk.event { $0.housekeeping() }).contains("acquire lease lobby"))
        #expect(bob.state.isOpen)
    }
}
