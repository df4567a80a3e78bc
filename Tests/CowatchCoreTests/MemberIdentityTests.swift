import CowatchCore
import CowatchTime
import SlashCommands
import Testing

/// Ids stay their holders': never given twice in a room, whatever happened
/// between (restarts, departures); and a client that says goodbye is gone at once.
@Suite("Member identity")
struct MemberIdentityTests {
    static func restored(_ snapshot: RoomSnapshot, _ records: [MemberRecord], at now: ServerInstant) -> Room {
        Room.restore(snapshot, members: records, chat: [], downSince: now, maximumDowntime: ServerInterval(milliseconds: 600_000),
                     now: now).0
    }

    static func newcomer(_ room: inout Room, now: ServerInstant) -> MemberID? {
        if case .accepted(let id, _) = room.connectionOpened(ConnectRequest(name: "newcomer", newToken: "new"), now: now) {
            return id
        }
        return nil
    }

    @Test("after a restart newcomers are numbered after members who arrived since the last snapshot")
    func restartKeepsCounting() {
        var room = Scenario.alone("alice")
        let snapshot = room.room.snapshot(at: room.now)
        room.connect("bob")
        room.connect("carol")
        let records = room.room.members.values.map(\.record)
        var back = Self.restored(snapshot, records, at: room.now)
        let first = Self.newcomer(&back, now: room.now)
        let second = Self.newcomer(&back, now: room.now)
        #expect(first == MemberID("m4"))
        #expect(second == MemberID("m5"))
        #expect(![room.id("alice"), room.id("bob"), room.id("carol")].contains(first ?? MemberID("m1")))
    }

    @Test("a room's founder is told its owner key once, and the room is kept with it at once: a restart before anything else happens in it does not bring it back without its owner")
    func foundingIsKept() {
        var room = Scenario()
        room.connect("alice", newOwnerKey: "the-key")
        let snapshot = room.last.compactMap { action -> RoomSnapshot? in
            if case .persist(let snapshot) = action { snapshot } else { nil }
        }.last
        #expect(snapshot?.protection?.ownerKeyDigest == SecretDigest.hex("the-key"))
        room.connect("bob")
        #expect(!room.last.contains { if case .persist = $0 { true } else { false } }, "a second arrival saves nothing new")
    }

    @Test("a member who is gone for good has its number kept in the snapshot, so a restart does not give it again")
    func departureKeepsCounter() {
        var room = Scenario.sharing("alice", "bob")
        room.leave("bob")
        let snapshot = room.last.compactMap { action -> RoomSnapshot? in
            if case .persist(let snapshot) = action { snapshot } else { nil }
        }.last
        #expect(snapshot?.nextMemberNumber == 3)
        guard let snapshot else { return }
        var back = Self.restored(snapshot, room.room.members.values.map(\.record), at: room.now)
        #expect(Self.newcomer(&back, now: room.now) == MemberID("m3"))
    }

    @Test("a client that closes with 1000 is gone at once, and the others are told it left")
    func leavingIsImmediate() {
        var room = Scenario.sharing("alice", "bob")
        room.leave("bob")
        #expect(room.room.member(room.id("bob")) == nil)
        #expect(room.departures.map(\.1) == [.left])
        #expect(!room.isArmed(.resumeExpires(room.id("bob"), serial: 1)))
    }

    @Test("a dropped connection keeps its member for the resume grace")
    func droppingKeepsGrace() {
        var room = Scenario.sharing("alice", "bob")
        room.disconnect("bob")
        #expect(room.room.member(room.id("bob"))?.connected == false)
        #expect(room.departures.isEmpty)
        #expect(room.reconnect("bob") == room.id("bob"))
    }
}

/// A room is full of the people in it.
@Suite("Room capacity")
struct RoomCapacityTests {
    @Test("members waiting out their resume grace do not fill a room")
    func awayMembersDoNotCount() {
        var room = Scenario(configuration: RoomConfiguration(maximumMembers: 2))
        room.connect("alice")
        room.connect("bob")
        room.disconnect("bob")
        #expect(room.connect("carol") != nil)
        #expect(room.connect("dave") == nil)
        #expect(room.connectRefusal?.code == .roomFull)
        // bob is still within his grace and comes back, past the limit: he was counted.
        #expect(room.reconnect("bob") == room.id("bob"))
    }

    @Test("connections that come and drop at once are let go, oldest first, past twice the room's size")
    func awayMembersAreBounded() {
        var room = Scenario(configuration: RoomConfiguration(maximumMembers: 2))
        room.connect("alice")
        for index in 0..<10 {
            room.connect("drop\(index)")
            room.disconnect("drop\(index)")
        }
        #expect(room.room.members.count <= 4)
        #expect(room.room.member(room.id("alice"))?.connected == true)
        #expect(room.room.member(room.id("drop9")) != nil)
        #expect(room.room.member(room.id("drop0")) == nil)
    }

    @Test("the owner comes into a full room")
    func ownerIsNeverRefused() {
        var room = Scenario(configuration: RoomConfiguration(maximumMembers: 1))
        room.connect("alice", newOwnerKey: "the-key")
        room.leave("alice")
        room.connect("bob")
        #expect(room.connect("mallory") == nil)
        #expect(room.connect("alice", ownerKey: "the-key") != nil)
        #expect(room.member("alice")?.owner == true)
    }
}
