import CowatchCore
import SlashCommands
import Testing

@Suite("/help, /nick, chat, /me, /time, /who, /status")
struct CommandChatTests {
    @Test("/help lists every command to the sender alone")
    func helpListsCommands() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/help")
        guard case .help(let lines)? = room.reply(for: "bob") else {
            Issue.record("no help reply")
            return
        }
        #expect(lines == CommandReference.helpLines())
        #expect(lines.contains { $0.hasPrefix("/seek <time>") })
        #expect(!lines.contains { $0.hasPrefix("/ready") })
        #expect(room.events(for: "alice").isEmpty)
    }

    @Test("/help players lists the reports players send")
    func helpPlayers() {
        var room = Scenario.sharing("alice")
        room.say("alice", "/help players")
        guard case .help(let lines)? = room.reply(for: "alice") else {
            Issue.record("no help reply")
            return
        }
        #expect(lines.contains { $0.hasPrefix("/ready <seq>") })
        #expect(!lines.contains { $0.hasPrefix("/seek") })
    }

    @Test("/help seek shows the usage of /seek")
    func helpShowsOneCommand() {
        var room = Scenario.sharing("alice")
        room.say("alice", "/help /seek")
        guard case .help(let lines)? = room.reply(for: "alice") else {
            Issue.record("no help reply")
            return
        }
        #expect(lines.first == "usage: /seek <time>")
    }

    @Test("/help of an unknown command is refused with bad arguments")
    func helpUnknownCommand() {
        Scenario.expectBadArguments("/help frobnicate", usage: "usage: /help [command|players]")
    }

    @Test("an unknown command is refused to the sender alone, pointing to /help")
    func unknownCommand() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/frobnicate")
        room.expectRefused("bob", .unknownCommand, saying: "/help")
        #expect(room.events(for: "alice").isEmpty)
    }

    @Test("/nick renames the member and tells everyone")
    func nickRenames() {
        var room = Scenario.sharing("alice", "bob")
        room.say("alice", "/nick Alicia")
        #expect(room.participant("alice")?.name.text == "Alicia")
        #expect(room.announced("alice", .renamed(from: Self.name("alice"))))
        #expect(room.events(for: "bob").count == 1)
    }

    @Test("/nick to a name someone holds, in any case, gets a suffix")
    func nickDuplicateGetsSuffix() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/nick ALICE")
        #expect(room.participant("bob")?.name.text == "ALICE-2")
    }

    @Test("/nick to one's own name in another case renames without a suffix")
    func nickOwnNameOtherCase() {
        var room = Scenario.sharing("alice")
        room.say("alice", "/nick Alice")
        #expect(room.participant("alice")?.name.text == "Alice")
    }

    @Test("/nick to the current name only tells the sender")
    func nickSameName() {
        var room = Scenario.sharing("alice", "bob")
        room.expectOnlyTold("alice", after: "/nick alice")
        #expect(room.participantChanges.isEmpty)
    }

    @Test("/nick without a name, with an invisible character or too long is refused with bad arguments and the usage")
    func nickBadArguments() {
        var room = Scenario.sharing("alice")
        for text in ["/nick", "/nick two\u{200B}words", "/nick \(String(repeating: "x", count: 33))"] {
            room.say("alice", text)
            room.expectRefused("alice", .badArguments, saying: "usage: /nick <name>")
        }
        #expect(room.participant("alice")?.name.text == "alice")
    }

    @Test("names on connect: duplicates get -2 and -3 and are told so, inner spaces are kept, invalid names become guest with the reason")
    func namesOnConnect() {
        var room = Scenario.alone("alice")
        room.connect("alice2", displayName: "Alice")
        #expect(room.participant("alice2")?.name.text == "Alice-2")
        #expect(room.told("alice2").contains("Alice is taken here; you are Alice-2: /nick <name> changes it"))
        room.connect("alice3", displayName: "ALICE")
        #expect(room.participant("alice3")?.name.text == "ALICE-3")
        room.connect("spaced", displayName: "  Dana   Scully ")
        #expect(room.participant("spaced")?.name.text == "Dana Scully")
        #expect(room.told("spaced").isEmpty && room.error(for: "spaced") == nil)
        room.connect("hidden", displayName: "dana\u{200B}")
        #expect(room.participant("hidden")?.name.text == "guest")
        room.expectRefused("hidden", .badName)
        #expect(room.error(for: "hidden")?.message == "your name was not taken: a name takes visible characters and single spaces only (U+200B ZERO WIDTH SPACE is a control or invisible character). You are guest here; /nick <name> changes it")
        room.connect("empty", displayName: "")
        #expect(room.participant("empty")?.name.text == "guest-2")
        #expect(room.error(for: "empty")?.message.contains("a name needs at least one character") == true)
    }

    @Test("a chat line goes to every member with the sender's id, name and the time")
    func chatBroadcasts() {
        var room = Scenario.sharing("alice", "bob")
        room.advance(seconds: 3)
        room.say("alice", "hello there")
        for name in ["alice", "bob"] {
            let line = room.chats(for: name).first
            #expect(line?.text == "hello there")
            #expect(line?.from == room.id("alice"))
            #expect(line?.name.text == "alice")
            #expect(line?.at == room.now)
            #expect(line?.me == false)
        }
    }

    @Test("chat needs no session and works for members outside it")
    func chatWithoutSession() {
        var room = Scenario.alone("alice")
        room.connect("bob", join: false)
        room.say("bob", "anyone?")
        #expect(room.chats(for: "alice").map(\.text) == ["anyone?"])
    }

    @Test("//x is the chat text /x")
    func doubleSlashIsChat() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "//play is a command")
        #expect(room.chats(for: "alice").map(\.text) == ["/play is a command"])
        #expect(room.playback.status == .paused)
    }

    @Test("a blank line does nothing")
    func blankLine() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "   ")
        #expect(room.last.isEmpty)
    }

    @Test("/me sends an action line to everyone")
    func meIsAnAction() {
        var room = Scenario.sharing("alice", "bob")
        room.say("bob", "/me waves")
        let line = room.chats(for: "alice").first
        #expect(line?.text == "waves")
        #expect(line?.me == true)
        #expect(line?.from == room.id("bob"))
    }

    @Test("/me without text is refused with bad arguments")
    func meWithoutText() {
        Scenario.expectBadArguments("/me", usage: "usage: /me <text>")
    }

    @Test("/time answers the sender alone with its value and the server time")
    func timeAnswers() {
        var room = Scenario.sharing("alice", "bob")
        room.advance(milliseconds: 1234)
        room.say("bob", "/time 1700000001000.5")
        #expect(room.events(for: "bob") == [.time(client: 1_700_000_001_000.5, server: room.now)])
        #expect(room.events(for: "alice").isEmpty)
    }

    @Test("/time without a number is refused with bad arguments")
    func timeBadArguments() {
        Scenario.expectBadArguments("/time soon", usage: "usage: /time <client-ms>")
    }

    @Test("/who lists every member with role, session, player, readiness and suspensions")
    func whoLists() {
        var room = Scenario.sharing("alice", "bob", players: ["bob"])
        room.connect("carol", join: false)
        room.say("alice", "/play")
        room.say("bob", "/ready \(room.state.seq)")
        room.say("alice", "/suspend")
        room.say("carol", "/who")
        guard case .who(let list)? = room.reply(for: "carol") else {
            Issue.record("no who reply")
            return
        }
        #expect(list.map(\.name.text) == ["alice", "bob", "carol"])
        #expect(list.map(\.role) == [.host, .member, .member])
        #expect(list.map(\.joined) == [true, true, false])
        #expect(list.map(\.player) == [false, true, false])
        #expect(list.map(\.ready) == [false, true, false])
        #expect(list.map(\.suspensions) == [[.userActionRequired], [], []])
    }

    @Test("/status answers with the state and the group position now")
    func statusAnswers() {
        var room = Scenario.sharing("alice", "bob", players: ["alice"])
        room.playTogether(by: "alice")
        room.watchFor(seconds: 12.5)
        room.say("bob", "/status")
        guard case .status(let state, let position, let now)? = room.reply(for: "bob") else {
            Issue.record("no status reply")
            return
        }
        #expect(state == room.state)
        #expect(position.seconds == 12.5)
        #expect(now == room.now)
        #expect(room.events(for: "alice").isEmpty)
    }

    @Test("/status without a session answers idle")
    func statusWithoutSession() {
        var room = Scenario.alone("alice")
        room.say("alice", "/status")
        guard case .status(let state, _, _)? = room.reply(for: "alice") else {
            Issue.record("no status reply")
            return
        }
        #expect(state.session == nil)
        #expect(state.playback.status == .idle)
    }

    @Test("/who and /status take no arguments")
    func whoStatusBadArguments() {
        var room = Scenario.sharing("alice")
        room.say("alice", "/who is here")
        room.expectRefused("alice", .badArguments)
        room.say("alice", "/status now")
        room.expectRefused("alice", .badArguments)
    }

    static func name(_ text: String) -> DisplayName {
        DisplayName(text) ?? .guest
    }
}
