import CowatchCore
import CowatchTime
import SlashCommands
import Testing

@Suite("Room ownership (docs/security.md)")
struct RoomOwnershipTests {
    static func founded() -> Scenario {
        var room = Scenario()
        room.connect("alice", newOwnerKey: "alice-key")
        room.connect("bob", newOwnerKey: "unused")
        return room
    }

    @Test("the member who creates the room is its host and owner and alone is told the owner key")
    func creatorGetsTheKey() {
        var room = Scenario()
        room.connect("alice", newOwnerKey: "alice-key")
        guard case .welcome(let welcome)? = room.events(for: "alice").first else { Issue.record("no welcome"); return }
        #expect(welcome.ownerKey == "alice-key")
        #expect(welcome.you.role == .host && welcome.you.owner)
        #expect(room.room.protection.ownerKeyDigest == SecretDigest.hex("alice-key"))
        room.connect("bob", newOwnerKey: "bob-key")
        guard case .welcome(let second)? = room.events(for: "bob").first else { Issue.record("no welcome"); return }
        #expect(second.ownerKey == nil)
        #expect(second.you.role == .member && !second.you.owner)
    }

    @Test("hosts cannot deop, kick, ban or mute the owner")
    func ownerOutranksHosts() {
        var room = Self.founded()
        room.say("alice", "/op bob")
        for line in ["/deop alice", "/kick alice", "/ban alice", "/mute alice"] {
            room.say("bob", line)
            #expect(room.error(for: "bob")?.code == .forbidden, "\(line)")
        }
        #expect(room.participant("alice")?.role == .host)
        #expect(room.participant("alice")?.muted == false)
    }

    @Test("when every host has gone, nobody is promoted; the owner key makes its holder host again")
    func ownerKeyBringsHostRightsBack() {
        var room = Self.founded()
        room.say("alice", "/policy control hosts")
        room.disconnect("alice")
        room.advance(milliseconds: RoomConfiguration().resumeGrace.milliseconds)
        #expect(room.participant("bob")?.role == .member)
        room.connect("carol")
        #expect(room.participant("carol")?.role == .member)
        room.connect("alice2", ownerKey: "alice-key")
        #expect(room.participant("alice2")?.role == .host)
        #expect(room.participant("alice2")?.owner == true)
        room.connect("mallory", ownerKey: "guessed")
        #expect(room.participant("mallory")?.role == .member)
    }

    @Test("a room without an owner still hands host rights to the longest present")
    func roomsWithoutOwnersPromote() {
        var room = Scenario.alone("alice")
        room.connect("bob")
        room.disconnect("alice")
        room.advance(milliseconds: RoomConfiguration().resumeGrace.milliseconds)
        #expect(room.participant("bob")?.role == .host)
    }

    @Test("an emptied room is kept until the room expiry, and a visit keeps it longer")
    func emptyRoomsExpire() {
        let configuration = RoomConfiguration(roomExpiry: ServerInterval(milliseconds: 3_600_000))
        var room = Scenario(configuration: configuration)
        room.connect("alice", newOwnerKey: "key")
        room.say("alice", "/policy control hosts")
        room.disconnect("alice")
        room.advance(milliseconds: configuration.resumeGrace.milliseconds)
        #expect(room.room.isEmpty)
        room.advance(milliseconds: 3_599_000)
        #expect(!room.host.forgotten)
        room.connect("bob")
        #expect(room.participant("bob")?.role == .member)
        #expect(room.state.policy.control == .hosts)
        room.disconnect("bob")
        room.advance(milliseconds: configuration.resumeGrace.milliseconds + 3_599_000)
        #expect(!room.host.forgotten)
        room.advance(milliseconds: 1_000)
        #expect(room.host.forgotten)
    }

    @Test("owner, bans and slow mode are in the snapshot and come back with a restored room, which then expires")
    func protectionIsRestored() {
        var room = Self.founded()
        room.say("alice", "/ban bob flooding", "/slow 5")
        room.disconnect("alice")
        room.advance(milliseconds: RoomConfiguration().resumeGrace.milliseconds)
        let snapshot = room.room.snapshot(at: room.now)
        let (restored, actions) = Room.restore(snapshot, members: [], chat: [], downSince: room.now,
                                               maximumDowntime: ServerInterval(milliseconds: 60_000), now: room.now)
        #expect(restored.protection.ownerKeyDigest == SecretDigest.hex("alice-key"))
        #expect(restored.protection.bans.map(\.name.text) == ["bob"])
        #expect(restored.protection.slowMode == ServerInterval(milliseconds: 5000))
        #expect(actions.contains { if case .schedule(.roomExpires, _) = $0 { true } else { false } })
    }
}

@Suite("Moderation that sticks (docs/security.md)")
struct ModerationTests {
    @Test("a kick keeps the member out by resume token, device, name and address, and says who, why and how long")
    func kickKeepsOut() {
        var room = Scenario.alone("alice")
        room.connect("mallory", device: "dev-1", address: "10.0.0.7")
        let token = room.tokens["mallory"]
        room.say("alice", "/kick mallory spam")
        #expect(room.disconnections == [room.id("mallory")])
        #expect(room.notices.map(\.text) == ["mallory was kicked by alice (spam)"])
        let attempts: [(String, String?, String?, String?)] = [
            ("mallory", nil, nil, nil), ("m2", token, nil, nil), ("m3", nil, "dev-1", nil), ("m4", nil, nil, "10.0.0.7"),
        ]
        for (name, resume, device, address) in attempts {
            #expect(room.connect(name, resume: resume, device: device, address: address) == nil, "\(name)")
            #expect(room.connectRefusal?.code == .banned)
            #expect(room.connectRefusal?.message == "you were kicked from this room by alice (spam); you may come back in 10 min")
        }
        #expect(room.connect("carol", device: "dev-2", address: "10.0.0.8") != nil)
    }

    @Test("a member whose name has spaces is kicked by its name in quotes, muted and unmuted by its name as it is")
    func namesWithSpaces() {
        var room = Scenario.alone("alice")
        room.connect("dana", displayName: "Dana Scully")
        room.say("alice", "/mute dana  scully")
        #expect(room.participant("dana")?.muted == true)
        room.say("alice", "/unmute Dana Scully")
        #expect(room.participant("dana")?.muted == false)
        room.say("alice", "/kick \"DANA SCULLY\" spoilers")
        #expect(room.disconnections == [room.id("dana")])
        #expect(room.notices.map(\.text).last == "Dana Scully was kicked by alice (spoilers)")
        #expect(room.connect("dana2", displayName: "dana scully") == nil)
        room.say("alice", "/unban Dana Scully")
        #expect(room.connect("dana3", displayName: "Dana Scully") != nil)
    }

    @Test("a timed ban lifts itself; /bans lists bans and cooldowns; /unban takes a number or a name")
    func bansListAndLift() {
        var room = Scenario.alone("alice")
        room.connect("bob")
        room.connect("carol")
        room.say("alice", "/ban bob 1 flooding", "/kick carol", "/ban mallory")
        #expect(room.told("alice") == ["nobody here is called mallory; the name mallory is banned"])
        room.say("alice", "/bans")
        guard case .bans(let bans, _)? = room.reply(for: "alice") else { Issue.record("no /bans reply"); return }
        #expect(bans.map(\.name.text) == ["bob", "carol", "mallory"])
        #expect(bans.map(\.kind) == [.ban, .kick, .ban])
        #expect(room.connect("mallory") == nil)
        room.say("alice", "/unban #\(bans[2].number)")
        #expect(room.connect("mallory") != nil)
        #expect(room.connect("bob") == nil)
        room.advance(seconds: 60)
        #expect(room.connect("bob") != nil)
        room.say("alice", "/unban nobody")
        room.expectRefused("alice", .notPossible)
    }

    @Test("a muted member's chat and commands are refused, its player reports still count; /unmute ends it")
    func muteSilencesButKeepsThePlayer() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.say("alice", "/mute bob")
        #expect(room.participant("bob")?.muted == true)
        room.say("bob", "hello")
        room.expectRefused("bob", .muted)
        room.say("bob", "/play")
        room.expectRefused("bob", .muted)
        room.say("alice", "/play")
        room.expectStartsOnceReady("bob")
        room.say("alice", "/unmute bob")
        room.say("bob", "hello")
        #expect(room.chats(for: "alice").map(\.text) == ["hello"])
    }

    @Test("slow mode refuses a second chat line too soon, saying how long to wait; hosts are not slowed")
    func slowMode() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/slow 10")
        room.say("bob", "one")
        room.advance(seconds: 4)
        room.say("bob", "two")
        room.expectRefused("bob", .slowMode)
        #expect(room.error(for: "bob")?.message == "slow mode: one chat line every 10 s; wait 6 s")
        room.say("alice", "a", "b")
        #expect(room.chats(for: "bob").map(\.text) == ["b"])
        room.advance(seconds: 6)
        room.say("bob", "three")
        #expect(room.chats(for: "alice").map(\.text) == ["three"])
        room.say("alice", "/slow off")
        room.say("bob", "four")
        #expect(room.chats(for: "alice").map(\.text) == ["four"])
    }
}

@Suite("Locks, passwords and invite links (docs/security.md)")
struct RoomAccessTests {
    static func founded() -> Scenario {
        var room = Scenario()
        room.connect("alice", address: "10.0.0.1", newOwnerKey: "alice-key")
        return room
    }

    /// The token of the invite the last input gave `name`.
    static func inviteToken(_ room: Scenario, _ name: String) -> String? {
        if case .invite(_, let token, _)? = room.reply(for: name) { return token }
        return nil
    }

    @Test("a locked room refuses a stranger and admits an invite holder until the invite's uses run out")
    func lockAndInvites() {
        var room = Self.founded()
        room.say("alice", "/lock")
        #expect(room.state.policy.locked)
        #expect(room.connect("eve") == nil)
        #expect(room.connectRefusal?.code == .locked)
        room.say("alice", "/invite 2 60")
        let token = Self.inviteToken(room, "alice")
        #expect(token != nil)
        #expect(room.connect("bob", join: true, resume: nil) == nil)
        room.say("alice", "/invites")
        guard case .invites(let invites, _)? = room.reply(for: "alice") else { Issue.record("no /invites"); return }
        #expect(invites.map(\.usesLeft) == [2])
        #expect(connectWithInvite(&room, "bob", token) != nil)
        #expect(connectWithInvite(&room, "carol", token) != nil)
        #expect(connectWithInvite(&room, "dave", token) == nil)
        #expect(room.connectRefusal?.code == .locked)
        // Members already in come back with their resume token, lock or not.
        room.disconnect("bob")
        #expect(room.reconnect("bob") != nil)
        // The owner key opens a locked room too.
        #expect(room.connect("alice-phone", ownerKey: "alice-key") != nil)
        room.say("alice", "/unlock")
        #expect(room.connect("eve") != nil)
    }

    @Test("an invite ends at its time, or when revoked")
    func invitesEnd() {
        var room = Self.founded()
        room.say("alice", "/lock", "/invite 5 1")
        let first = Self.inviteToken(room, "alice")
        room.say("alice", "/invite 5 60")
        let second = Self.inviteToken(room, "alice")
        room.advance(seconds: 61)
        #expect(connectWithInvite(&room, "bob", first) == nil)
        room.say("alice", "/revoke 2")
        #expect(room.told("alice") == ["invite #2 no longer lets anyone in"])
        #expect(connectWithInvite(&room, "carol", second) == nil)
        room.say("alice", "/revoke 2")
        room.expectRefused("alice", .notPossible)
    }

    @Test("a password is asked of newcomers; wrong ones are refused, then the address is refused for a while")
    func passwords() {
        var room = Self.founded()
        room.say("alice", "/password hunter2")
        #expect(room.state.policy.password)
        #expect(room.room.protection.password?.digest != nil)
        #expect(room.room.protection.password?.digest.contains("hunter2") == false)
        #expect(room.connect("bob", address: "10.0.0.2") == nil)
        #expect(room.connectRefusal?.code == .passwordRequired)
        #expect(connectWithPassword(&room, "bob", "hunter2", address: "10.0.0.2") != nil)
        for _ in 0..<5 {
            #expect(connectWithPassword(&room, "eve", "guess", address: "10.6.6.6") == nil)
            #expect(room.connectRefusal?.code == .wrongPassword)
        }
        #expect(connectWithPassword(&room, "eve", "hunter2", address: "10.6.6.6") == nil)
        #expect(room.connectRefusal?.code == .tooManyAttempts)
        #expect(room.connectRefusal?.message == "too many wrong passwords or tokens from your address; try again in 1 min")
        // Another address is not held up; after the window the first may try again.
        #expect(connectWithPassword(&room, "carol", "hunter2", address: "10.0.0.3") != nil)
        room.advance(seconds: 60)
        #expect(connectWithPassword(&room, "eve", "hunter2", address: "10.6.6.6") != nil)
        room.say("alice", "/password off")
        #expect(!room.state.policy.password)
        #expect(room.connect("frank") != nil)
    }

    @Test("/public on in a room with a password says it is not listed while it has one; removing the password lists it")
    func listingWithAPassword() {
        var room = Self.founded()
        room.say("alice", "/password hunter2", "/public on")
        #expect(room.state.policy.listed)
        #expect(!room.room.isShownInListing)
        #expect(room.notices.map(\.text)
            == ["alice asked for the room to be listed on the server's front page; it is not listed while it has a password"])
        room.say("alice", "/public on")
        #expect(room.told("alice") == ["the room is to be listed, but it is not on the server's front page while it has a password"])
        room.say("alice", "/lock")
        #expect(room.notices.map(\.text) == ["alice locked the room: only invite links let anyone new in"])
        room.say("alice", "/password off")
        #expect(room.notices.map(\.text) == ["alice removed the room's password"])
        room.say("alice", "/unlock")
        #expect(room.room.isShownInListing)
        #expect(room.notices.map(\.text) == ["alice unlocked the room; the room is listed on the server's front page again"])
        room.say("alice", "/password hunter2")
        #expect(!room.room.isShownInListing)
        #expect(room.notices.map(\.text) == ["alice set a password for the room: newcomers are asked for it; "
            + "the room is off the server's front page while it has a password"])
    }

    @Test("/public on in an open room lists it, and says so")
    func listingAnOpenRoom() {
        var room = Self.founded()
        room.say("alice", "/public on")
        #expect(room.room.isShownInListing)
        #expect(room.notices.map(\.text) == ["alice listed the room on the server's front page"])
        room.say("alice", "/public off")
        #expect(!room.room.isShownInListing)
        #expect(room.notices.map(\.text) == ["alice took the room off the server's front page"])
    }

    @Test("lock, password and invites come back with a restored room")
    func accessIsRestored() {
        var room = Self.founded()
        room.say("alice", "/lock", "/password hunter2", "/invite 3")
        let token = Self.inviteToken(room, "alice")
        let snapshot = room.room.snapshot(at: room.now)
        var (restored, _) = Room.restore(snapshot, members: [], chat: [], downSince: room.now,
                                         maximumDowntime: ServerInterval(milliseconds: 60_000), now: room.now)
        #expect(restored.state.policy.locked)
        guard case .refused(let error) = restored.connectionOpened(ConnectRequest(name: "x", newToken: "t"), now: room.now) else {
            Issue.record("a stranger came into a restored locked room"); return
        }
        #expect(error.code == .locked)
        let invited = restored.connectionOpened(ConnectRequest(name: "y", newToken: "t2", invite: token), now: room.now)
        if case .refused(let error) = invited { Issue.record("the invite was refused: \(error.message)") }
    }
}

private func connectWithInvite(_ room: inout Scenario, _ name: String, _ token: String?) -> MemberID? {
    room.connect(name, invite: token)
}

private func connectWithPassword(_ room: inout Scenario, _ name: String, _ password: String, address: String) -> MemberID? {
    room.connect(name, address: address, password: password)
}

@Suite("Bot tokens and their scopes (docs/security.md)")
struct BotTokenTests {
    static func withToken(_ scope: String) -> (Scenario, String?) {
        var room = Scenario()
        room.connect("alice", newOwnerKey: "key")
        room.say("alice", "/watch https://example.org/a.mp4 A", "/policy control hosts")
        room.say("alice", "/token dj-bot \(scope)")
        guard case .token(_, let token)? = room.reply(for: "alice") else { return (room, nil) }
        return (room, token)
    }

    @Test("a bot comes in with its token under the token's name, past a lock, and is shown as a bot")
    func botsComeInByToken() {
        var (room, token) = Self.withToken("chat")
        room.say("alice", "/lock")
        #expect(room.connect("bot", displayName: "ignored", token: token) != nil)
        #expect(room.participant("bot")?.name.text == "dj-bot")
        #expect(room.participant("bot")?.scope == .chat)
        #expect(room.connect("fake", token: "not-a-token") == nil)
        #expect(room.connectRefusal?.code == .badToken)
    }

    @Test("read only reads, chat also talks, control also drives playback under control hosts")
    func scopesAreEnforced() {
        var (reader, readToken) = Self.withToken("read")
        reader.connect("bot", token: readToken)
        reader.say("bot", "hello")
        reader.expectRefused("bot", .forbidden)
        reader.say("bot", "/who")
        #expect(reader.reply(for: "bot") != nil)

        var (talker, chatToken) = Self.withToken("chat")
        talker.connect("bot", token: chatToken)
        talker.say("bot", "hello")
        #expect(talker.chats(for: "alice").map(\.text) == ["hello"])
        talker.say("bot", "/play now")
        talker.expectRefused("bot", .forbidden)
        #expect(talker.playback.status == .paused)

        var (driver, controlToken) = Self.withToken("control")
        driver.connect("bot", token: controlToken)
        driver.say("bot", "/play now")
        #expect(driver.playback.status == .playing)
        driver.say("bot", "/kick alice")
        driver.expectRefused("bot", .forbidden)
    }

    @Test("guessing tokens is limited per address like passwords")
    func tokenGuessesAreLimited() {
        var (room, token) = Self.withToken("chat")
        for guess in 0..<5 {
            #expect(room.connect("g\(guess)", address: "10.6.6.6", token: "guess-\(guess)") == nil)
            #expect(room.connectRefusal?.code == .badToken)
        }
        #expect(room.connect("bot", address: "10.6.6.6", token: token) == nil)
        #expect(room.connectRefusal?.code == .tooManyAttempts)
        #expect(room.connect("bot", address: "10.0.0.1", token: token) != nil)
    }

    @Test("/untoken revokes a token and closes its bots' connections")
    func revokedTokens() {
        var (room, token) = Self.withToken("chat")
        room.connect("bot", token: token)
        room.say("alice", "/tokens")
        guard case .tokens(let bots)? = room.reply(for: "alice") else { Issue.record("no /tokens"); return }
        room.say("alice", "/untoken \(bots[0].number)")
        #expect(room.disconnections == [room.id("bot")])
        // The room is told why the bot went, as it is told of a kick.
        #expect(room.notices.contains { $0.text.hasSuffix(" was let go: its token was revoked by alice") }, "\(room.notices.map(\.text))")
        #expect(room.connect("bot2", token: token) == nil)
        #expect(room.connectRefusal?.code == .badToken)
    }
}

@Suite("Room names")
struct RoomNameTests {
    @Test("room names are case-insensitive, kept in lowercase")
    func caseInsensitive() {
        #expect(RoomName("Movie-Night") == RoomName("movie-night"))
        #expect(RoomName("LOBBY")?.rawValue == "lobby")
        #expect(RoomName("bad name") == nil)
    }
}
