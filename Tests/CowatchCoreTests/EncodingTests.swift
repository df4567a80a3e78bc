import Foundation
import SlashCommands
import Testing
@testable import CowatchCore

/// The `cowatch.v1.json` encoding against docs/protocol.md: field names and JSON types.
@Suite("JSON event encoding")
struct EncodingTests {
    typealias F = EncodingFixture
    typealias J = WireJSON

    @Test("the fixtures hold every RoomEvent case and every reply kind")
    func fixturesCoverEveryCase() {
        #expect(Set(F.events.map(F.caseName)) == F.allCaseNames)
    }

    @Test("every event is one JSON object on one line with its string type", arguments: EncodingFixture.events)
    func everyEventIsAnObject(_ event: RoomEvent) throws {
        let object = try J.object(event)
        #expect(J.string(object["type"]) == event.type)
        #expect(!J.text(event).contains("\n"))
        #expect(String(validating: JSONEventEncoding.encode(event), as: UTF8.self) != nil)
    }

    @Test("welcome: you (id, name, role), room, serverTime, resume, participants")
    func welcome() throws {
        let object = try J.object(.welcome(F.welcome))
        #expect(J.string(object["type"]) == "welcome")
        let you = try #require(J.object(object["you"]))
        #expect(J.string(you["id"]) == "m1")
        #expect(J.string(you["name"]) == "alice")
        #expect(J.string(you["role"]) == "host")
        #expect(J.string(object["room"]) == "lobby")
        #expect(J.integer(object["serverTime"]) == 1_700_000_000_000)
        #expect(J.string(object["resume"]) == "tok-123")
        let participants = try #require(J.array(object["participants"]))
        #expect(participants.count == 2)
        try expectParticipant(participants[1], F.bob)
    }

    @Test("state: seq, session with activity, playback, queue and policy with their JSON types")
    func playingState() throws {
        let object = try J.object(.state(F.playing))
        #expect(J.string(object["type"]) == "state")
        #expect(J.integer(object["seq"]) == 7)

        let session = try #require(J.object(object["session"]))
        #expect(J.string(session["state"]) == "joined")
        #expect(session["reason"] == nil || J.isNull(session["reason"]), "no reason while joined")
        let activity = try #require(J.object(session["activity"]))
        #expect(J.string(activity["id"]) == "a1")
        #expect(J.string(activity["url"]) == "https://example.org/ep1.mp4")
        #expect(J.string(activity["title"]) == "Episode 1")
        #expect(J.string(activity["identifier"]) == "https://example.org/ep1.mp4")

        let playback = try #require(J.object(object["playback"]))
        #expect(J.string(playback["status"]) == "playing")
        #expect(J.string(playback["item"]) == "https://example.org/ep1.mp4")
        #expect(J.number(playback["rate"]) == 1.5)
        #expect(J.number(playback["position"]) == 723.25)
        #expect(J.isInteger(playback["at"]), "at is an integer: \(J.text(.state(F.playing)))")
        #expect(J.integer(playback["at"]) == 1_700_000_000_250)
        #expect(J.string(playback["by"]) == "m1")
        #expect(J.string(playback["cause"]) == "play")

        let queue = try #require(J.array(object["queue"]))
        #expect(queue.count == 1)
        let item = try #require(J.object(queue.first))
        #expect(J.string(item["id"]) == "q1")
        #expect(J.string(item["url"]) == "https://example.org/ep2.mp4")
        #expect(J.string(item["title"]) == "Episode 2")

        let policy = try #require(J.object(object["policy"]))
        #expect(J.string(policy["control"]) == "hosts")
        #expect(J.string(policy["stall"]) == "wait")
        #expect(J.number(policy["wait"]) == 2.5)
    }

    @Test("state with no session: session null, item null, by null; default policy")
    func idleState() throws {
        let object = try J.object(.state(F.idle))
        #expect(object.keys.contains("session"))
        #expect(J.isNull(object["session"]))
        let playback = try #require(J.object(object["playback"]))
        #expect(J.string(playback["status"]) == "idle")
        #expect(playback.keys.contains("item"))
        #expect(J.isNull(playback["item"]))
        #expect(J.isNull(playback["by"]))
        #expect(J.number(playback["rate"]) == 1)
        #expect(J.number(playback["position"]) == 0)
        #expect(J.integer(playback["at"]) == 1_700_000_000_000)
        #expect(J.string(playback["cause"]) == "create")
        #expect(J.array(object["queue"])?.isEmpty == true)
        let policy = try #require(J.object(object["policy"]))
        #expect(J.string(policy["control"]) == "everyone")
        #expect(J.string(policy["stall"]) == "continue")
        #expect(J.number(policy["wait"]) == 5)
    }

    @Test("an ended session is invalidated with reason ended, and the item is null")
    func endedState() throws {
        let object = try J.object(.state(F.ended))
        let session = try #require(J.object(object["session"]))
        #expect(J.string(session["state"]) == "invalidated")
        #expect(J.string(session["reason"]) == "ended")
        let playback = try #require(J.object(object["playback"]))
        #expect(J.string(playback["status"]) == "idle")
        #expect(J.isNull(playback["item"]))
        #expect(J.string(playback["cause"]) == "end")
    }

    @Test("positions are numbers at millisecond precision; at stays an integer")
    func numbers() throws {
        var state = F.playing
        state.playback.position = MediaTime(seconds: 1.23456)
        state.playback.rate = PlaybackRate(0.25)!
        let playback = try #require(J.object(try J.object(.state(state))["playback"]))
        #expect(J.number(playback["position"]) == 1.235)
        #expect(J.number(playback["rate"]) == 0.25)
        #expect(J.isInteger(playback["at"]))
    }

    @Test("participant: the member under the key participant, with booleans and a suspensions list")
    func participant() throws {
        let object = try J.object(.participant(F.bob, change: .suspended(.stallRecovery)))
        #expect(J.string(object["type"]) == "participant")
        try expectParticipant(object["participant"], F.bob)
        #expect(object["id"] == nil, "the member is under participant, not at the top level")
    }

    @Test("participant-left: id at the top level")
    func participantLeft() throws {
        let object = try J.object(.participantLeft(MemberID("m2"), name: F.bob.name, reason: .kicked))
        #expect(J.string(object["type"]) == "participant-left")
        #expect(J.string(object["id"]) == "m2")
    }

    @Test("chat: from, name, text, at; me true for /me")
    func chat() throws {
        let object = try J.object(.chat(F.chat))
        #expect(J.string(object["type"]) == "chat")
        #expect(J.string(object["from"]) == "m1")
        #expect(J.string(object["name"]) == "alice")
        #expect(J.string(object["text"]) == "hello")
        #expect(J.integer(object["at"]) == 1_700_000_000_000)
        #expect(object["me"] == nil || J.bool(object["me"]) == false)
        #expect(J.bool(try J.object(.chat(F.me))["me"]) == true)
    }

    @Test("notice: text, with cause and by when it reports a change")
    func notice() throws {
        let object = try J.object(.notice(F.notice))
        #expect(J.string(object["text"]) == "alice paused at 0:12:03")
        #expect(J.string(object["cause"]) == "pause")
        #expect(J.string(object["by"]) == "m1")
        let plain = try J.object(.notice(F.plainNotice))
        #expect(J.string(plain["text"]) == "already paused")
        #expect(plain["cause"] == nil || J.isNull(plain["cause"]))
    }

    @Test("error: code, message and command (null when no command was recognised)")
    func error() throws {
        let bad = try J.object(.error(F.badSeek))
        #expect(J.string(bad["type"]) == "error")
        #expect(J.string(bad["code"]) == "bad-arguments")
        #expect(J.string(bad["message"]) == "/seek: \"x\" is not a time (usage: /seek <time>)")
        #expect(J.string(bad["command"]) == "seek")
        let unknown = try J.object(.error(F.unknownCommand))
        #expect(J.string(unknown["code"]) == "unknown-command")
        #expect(J.string(unknown["message"]) == "unknown command /foo (try /help)")
        #expect(unknown.keys.contains("command") && J.isNull(unknown["command"]))
    }

    @Test("every error code is spelled as on the wire", arguments: ErrorCode.allCases)
    func errorCodes(_ code: ErrorCode) throws {
        let object = try J.object(.error(CommandError(code, command: .play, message: "m")))
        #expect(J.string(object["code"]) == code.rawValue)
        #expect(J.string(object["code"])?.allSatisfy { $0.isLowercase || $0 == "-" } == true)
    }

    @Test("time: client echoed as a number, server an integer")
    func time() throws {
        let object = try J.object(.time(client: 1_700_000_000_000.5, server: F.now))
        #expect(J.string(object["type"]) == "time")
        #expect(J.number(object["client"]) == 1_700_000_000_000.5)
        #expect(J.integer(object["server"]) == 1_700_000_000_000)
    }

    @Test("catchup: from a number, rate 2, until an integer")
    func catchup() throws {
        let object = try J.object(.catchup(F.catchup))
        #expect(J.string(object["type"]) == "catchup")
        #expect(J.number(object["from"]) == 713.5)
        #expect(J.number(object["rate"]) == 2)
        #expect(J.integer(object["until"]) == 1_700_000_010_000)
    }

    @Test("reply: the command and its data")
    func replies() throws {
        let help = try J.object(.reply(.help(lines: ["a", "b"])))
        #expect(J.string(help["type"]) == "reply")
        #expect(J.string(help["command"]) == "help")
        #expect(J.array(help["lines"]) as? [String] == ["a", "b"])

        let who = try J.object(.reply(.who([F.alice, F.bob])))
        #expect(J.string(who["command"]) == "who")
        let participants = try #require(J.array(who["participants"]))
        try expectParticipant(participants.first, F.alice)

        let status = try J.object(.reply(.status(F.playing, position: MediaTime(seconds: 730), now: F.now)))
        #expect(J.string(status["command"]) == "status")
        let state = try #require(J.object(status["state"]))
        #expect(J.integer(state["seq"]) == 7)
        #expect(J.string(J.object(state["playback"])?["status"]) == "playing")
        #expect(J.number(status["position"]) == 730)

        let queue = try J.object(.reply(.queue(F.queue)))
        #expect(J.string(queue["command"]) == "queue")
        #expect(J.string(J.object(J.array(queue["queue"])?.first)?["title"]) == "Episode 2")

        let policy = try J.object(.reply(.policy(RoomPolicy())))
        #expect(J.string(policy["command"]) == "policy")
        #expect(J.number(J.object(policy["policy"])?["wait"]) == 5)
    }

    func expectParticipant(_ value: Any?, _ member: Participant,
                           sourceLocation: SourceLocation = #_sourceLocation) throws {
        let object = try #require(J.object(value), sourceLocation: sourceLocation)
        #expect(J.string(object["id"]) == member.id.rawValue, sourceLocation: sourceLocation)
        #expect(J.string(object["name"]) == member.name.text, sourceLocation: sourceLocation)
        #expect(J.string(object["role"]) == member.role.rawValue, sourceLocation: sourceLocation)
        #expect(J.bool(object["joined"]) == member.joined, sourceLocation: sourceLocation)
        #expect(J.bool(object["player"]) == member.player, sourceLocation: sourceLocation)
        #expect(J.bool(object["ready"]) == member.ready, sourceLocation: sourceLocation)
        #expect(J.bool(object["autoplay"]) == member.autoplay, sourceLocation: sourceLocation)
        #expect(J.array(object["suspensions"]) as? [String] == member.suspensions.map(\.rawValue),
                sourceLocation: sourceLocation)
    }
}
