import CowatchCore
import SlashCommands
import Testing

@Suite("Connecting, disconnecting and resuming")
struct CommandConnectionTests {
    @Test("the first member of a room is its host, later ones are members, with ids m1, m2")
    func firstMemberIsHost() {
        var room = Scenario()
        #expect(room.connect("alice") == MemberID("m1"))
        #expect(room.connect("bob") == MemberID("m2"))
        #expect(room.participant("alice")?.role == .host)
        #expect(room.participant("bob")?.role == .member)
    }

    @Test("the welcome gives the newcomer its identity, a resume token and everyone present, then the state")
    func welcome() {
        var room = Scenario.sharing("alice")
        room.advance(seconds: 1)
        room.connect("bob", player: true)
        let events = room.events(for: "bob")
        guard case .welcome(let welcome)? = events.first else {
            Issue.record("no welcome first")
            return
        }
        #expect(welcome.you.id == room.id("bob"))
        #expect(welcome.you.role == .member)
        #expect(welcome.you.player == true)
        #expect(welcome.room.rawValue == "lobby")
        #expect(welcome.serverTime == room.now)
        #expect(!welcome.resume.isEmpty)
        #expect(welcome.participants.map(\.name.text) == ["alice", "bob"])
        #expect(events.dropFirst().first == .state(room.state))
    }

    @Test("everyone else hears of an arrival")
    func arrivalAnnounced() {
        var room = Scenario.sharing("alice")
        room.connect("bob")
        #expect(room.announced("bob", .arrived))
        #expect(room.events(for: "alice").count == 1)
    }

    @Test("a disconnected member is kept and shown as disconnected")
    func disconnectKeepsTheMember() {
        var room = Scenario.sharing("alice", "bob")
        room.disconnect("bob")
        #expect(room.announced("bob", .disconnected))
        #expect(room.participant("bob")?.connected == false)
        #expect(room.participant("bob")?.joined == true)
    }

    @Test("reconnecting with the resume token keeps the id, the role and the suspensions")
    func reconnectKeepsIdentity() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/suspend")
        let alice = room.id("alice")
        room.disconnect("alice")
        room.advance(seconds: 59)
        #expect(room.reconnect("alice") == alice)
        #expect(room.participant("alice")?.role == .host)
        #expect(room.participant("alice")?.connected == true)
        #expect(room.participant("alice")?.suspensions == [.userActionRequired])
        #expect(room.announced("alice", .reconnected))
        room.advance(seconds: 10)
        #expect(room.departures.isEmpty)
        #expect(room.member("alice") != nil)
    }

    @Test("a member not back within 60 s leaves the room")
    func graceExpires() {
        var room = Scenario.sharing("alice", "bob")
        let bob = room.id("bob")
        room.disconnect("bob")
        room.advance(milliseconds: 59_999)
        #expect(room.member("bob") != nil)
        room.advance(milliseconds: 1)
        #expect(room.member("bob") == nil)
        #expect(room.departures.first?.0 == bob)
        #expect(room.departures.first?.1 == .left)
    }

    @Test("a member away (a page in the background) when its connection closes is kept for the away grace, others for the resume grace")
    func awayIsNotGone() {
        var room = Scenario.sharing("alice", "bob", "carol")
        room.say("bob", "/suspend away")
        let bob = room.id("bob")
        room.disconnect("bob")
        room.disconnect("carol")
        room.advance(seconds: 61)
        #expect(room.member("carol") == nil)
        #expect(room.member("bob") != nil, "bob was away, not gone")
        room.advance(seconds: 1_700)
        #expect(room.reconnect("bob") == bob)
        #expect(room.participant("bob")?.suspensions == [.away])
        // Once back, a close without being away again has the usual grace.
        room.say("bob", "/resume away")
        room.disconnect("bob")
        room.advance(seconds: 60)
        #expect(room.member("bob") == nil)
    }

    @Test("an expired resume token makes a new member")
    func expiredTokenMakesANewMember() {
        var room = Scenario.sharing("alice", "bob")
        let bob = room.id("bob")
        room.disconnect("bob")
        room.advance(seconds: 60)
        room.reconnect("bob")
        #expect(room.id("bob") != bob)
    }

    @Test("when the last host is removed, the longest-present connected member becomes host")
    func hostIsHandedOn() {
        var room = Scenario.sharing("alice", "bob", "carol")
        room.disconnect("alice")
        room.advance(seconds: 30)
        room.disconnect("bob")
        room.advance(seconds: 30)
        #expect(room.member("alice") == nil)
        #expect(room.participant("bob")?.role == .member)
        #expect(room.participant("carol")?.role == .host)
        #expect(room.announced("carol", .role))
        #expect(room.notices.contains { $0.cause == .host && $0.text.contains("carol") })
    }

    @Test("a disconnected host stays host during its grace period")
    func hostKeptDuringGrace() {
        var room = Scenario.sharing("alice", "bob")
        room.disconnect("alice")
        room.say("bob", "/policy control hosts")
        room.expectRefused("bob", .forbidden)
        #expect(room.participant("alice")?.role == .host)
    }

    @Test("a disconnected player no longer holds up a waiting group")
    func disconnectStartsAWaitingGroup() {
        var room = Scenario.twoPlayersWaitingForBob()
        room.disconnect("bob")
        #expect(room.playback.status == .playing)
    }

    @Test("a waiting group whose last player disconnects pauses where it was")
    func lastPlayerDisconnects() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.say("alice", "/seek 9", "/play")
        room.disconnect("bob")
        room.expectPlayback(.paused, position: 9, cause: .leave)
    }

    @Test("a room at its member limit refuses a new connection with room-full")
    func roomFull() {
        var room = Scenario(configuration: RoomConfiguration(maximumMembers: 2))
        room.connect("alice")
        room.connect("bob")
        #expect(room.connect("carol") == nil)
        #expect(room.connectRefusal?.code == .roomFull)
    }

    @Test("a member in its grace period holds no place (the room counts who is there), and its resume is accepted in a full room")
    func graceHoldsNoPlace() {
        var room = Scenario(configuration: RoomConfiguration(maximumMembers: 2))
        room.connect("alice")
        let bob = room.connect("bob")
        room.disconnect("bob")
        #expect(room.connect("carol") != nil)
        #expect(room.connect("dave") == nil)
        #expect(room.connectRefusal?.code == .roomFull)
        #expect(room.reconnect("bob") == bob)
    }
}
