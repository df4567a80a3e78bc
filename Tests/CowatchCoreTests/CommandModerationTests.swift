import CowatchCore
import CowatchTime
import SlashCommands
import Testing

@Suite("/policy")
struct CommandPolicyTests {
    @Test("/policy alone answers anyone with the policy")
    func policyShows() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/policy")
        #expect(room.reply(for: "bob") == .policy(RoomPolicy()))
        #expect(room.events(for: "alice").isEmpty)
    }

    @Test("a host changing the policy publishes it to everyone")
    func policyChanges() {
        var room = Scenario.sharing("alice", "bob")
        room.expectNewState(when: "alice", says: "/policy control hosts stall wait wait 2.5")
        #expect(room.state.policy.control == .hosts)
        #expect(room.state.policy.stall == .wait)
        #expect(room.state.policy.wait == ServerInterval(milliseconds: 2500))
        room.expectPlayback(cause: .policy, by: "alice")
        #expect(room.events(for: "bob").contains(.state(room.state)))
        #expect(room.notices.contains { $0.cause == .policy })
    }

    @Test("a policy change that changes nothing only tells the sender")
    func policySame() {
        Scenario.expectOnlyTold("alice", after: "/policy control everyone")
    }

    @Test("/policy changes from a member who is not a host are refused with forbidden")
    func policyForbidden() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/policy control hosts")
        room.expectRefused("bob", .forbidden)
        #expect(room.state.policy.control == .everyone)
    }

    @Test("/policy with an unknown key or value is refused with bad arguments and the usage")
    func policyBadArguments() {
        var room = Scenario.sharing("alice")
        room.expectBadArguments("/policy stall maybe", "/policy control", "/policy wait 301", "/policy volume 11",
                                usage: "usage: /policy [control everyone|hosts]")
        #expect(room.state.policy == RoomPolicy())
    }
}

@Suite("/op and /deop")
struct CommandOpTests {
    @Test("/op makes a member a host, whatever the case of the name")
    func opPromotes() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/op BOB")
        #expect(room.participant("bob")?.role == .host)
        #expect(room.announced("bob", .role))
        #expect(room.notices.contains { $0.cause == .op && $0.by == room.id("alice") })
        room.say("alice", "/policy control hosts")
        room.say("bob", "/pause")
        #expect(room.error(for: "bob") == nil)
    }

    @Test("/op of a host only tells the sender")
    func opHost() {
        Scenario.expectOnlyTold("alice", after: "/op alice", in: .sharing("alice", "bob"))
    }

    @Test("/op, /deop and /kick from a member who is not a host are refused with forbidden")
    func moderationForbidden() {
        var room = Scenario.sharing("alice", "bob", "carol")
        for text in ["/op carol", "/deop alice", "/kick carol"] {
            room.say("bob", text)
            room.expectRefused("bob", .forbidden)
        }
        #expect(room.participant("carol")?.role == .member)
        #expect(room.participant("alice")?.role == .host)
        #expect(room.member("carol") != nil)
    }

    @Test("/op, /deop and /kick of nobody here are refused with no-such-member")
    func moderationNoSuchMember() {
        var room = Scenario.sharing("alice", "bob")
        for text in ["/op zed", "/deop zed", "/kick zed"] {
            room.say("alice", text)
            room.expectRefused("alice", .noSuchMember)
        }
    }

    @Test("/op, /deop and /kick without a name are refused with bad arguments and the usage")
    func moderationBadArguments() {
        var room = Scenario.sharing("alice")
        for command in ["op", "deop", "kick"] {
            room.expectBadArguments("/\(command)", usage: "usage: /\(command) <name>")
        }
    }

    @Test("/deop takes host rights from another host")
    func deopDemotes() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/op bob")
        room.say("bob", "/deop alice")
        #expect(room.participant("alice")?.role == .member)
        #expect(room.announced("alice", .role))
        #expect(room.notices.contains { $0.cause == .deop })
    }

    @Test("/deop of the last host is refused with last-host")
    func deopLastHost() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/deop alice")
        room.expectRefused("alice", .lastHost)
        #expect(room.participant("alice")?.role == .host)
    }

    @Test("/deop of a member who is not a host only tells the sender")
    func deopMember() {
        Scenario.expectOnlyTold("alice", after: "/deop bob", in: .sharing("alice", "bob"))
    }
}

@Suite("/kick")
struct CommandKickTests {
    @Test("/kick removes the member: everyone hears it left, kicked, and its connection is closed")
    func kickRemoves() {
        var room = Scenario.sharing("alice", "bob", "carol")
        let bob = room.id("bob")
        room.say("alice", "/kick bob")
        #expect(room.departures.count == 1)
        #expect(room.departures.first?.0 == bob)
        #expect(room.departures.first?.1 == .kicked)
        #expect(room.disconnections == [bob])
        #expect(room.member("bob") == nil)
        #expect(room.notices.contains { $0.cause == .kick && $0.text.contains("bob") })
        #expect(room.events(for: "carol").contains { $0 == .participantLeft(bob, name: Self.name("bob"), reason: .kicked) })
    }

    @Test("a kicked player no longer holds up a waiting group")
    func kickStartsAWaitingGroup() {
        var room = Scenario.twoPlayersWaiting()
        room.say("alice", "/ready \(room.state.seq)", "/kick bob")
        #expect(room.playback.status == .playing)
    }

    @Test("a kicked member's name is kept out for the kick cooldown, then free again")
    func kickFreesTheNameAfterTheCooldown() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/kick bob")
        #expect(room.connect("bob2", displayName: "bob") == nil)
        #expect(room.connectRefusal?.code == .banned)
        room.advance(milliseconds: RoomConfiguration().kickCooldown.milliseconds)
        room.connect("bob2", displayName: "bob")
        #expect(room.participant("bob2")?.name.text == "bob")
    }

    @Test("/kick of oneself is refused with bad arguments")
    func kickSelf() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/kick alice")
        room.expectRefused("alice", .badArguments)
        #expect(room.member("alice") != nil)
    }

    static func name(_ text: String) -> DisplayName {
        DisplayName(text) ?? .guest
    }
}
