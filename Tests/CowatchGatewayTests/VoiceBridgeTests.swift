import CowatchCore
@testable import CowatchGateway
import CowatchTime
import Foundation
import Testing

/// The node's link to Janus as a value (Sources/CowatchGateway/Voice/): what it
/// sends for the rooms' orders, and what Janus's answers become.
@Suite("Voice: the media server's link")
struct VoiceBridgeTests {
    let room = RoomName("lobby")!
    let ann = MemberID("m1")
    let bob = MemberID("m2")
    var now = MonotonicInstant(microseconds: 1_000_000)

    /// A request's fields, read back.
    static func fields(_ action: VoiceBridge.Action) -> [String: Any] {
        guard case .send(let text) = action,
              let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return [:] }
        return object
    }

    static func body(_ action: VoiceBridge.Action) -> [String: Any] {
        fields(action)["body"] as? [String: Any] ?? [:]
    }

    static func reply(_ json: String) -> JanusMessage {
        guard let message = JanusWire.message(json) else { fatalError("not a Janus message: \(json)") }
        return message
    }

    /// A bridge whose session and control handle are up.
    func ready(maximumRooms: Int = 10) -> VoiceBridge {
        var bridge = VoiceBridge(settings: VoiceBridge.Settings(secret: "s3cret-s3cret-s3cret", maximumRooms: maximumRooms))
        #expect(bridge.start() == [.connect])
        let create = bridge.opened(now: now)
        #expect(Self.fields(create[0])["janus"] as? String == "create")
        #expect(Self.fields(create[0])["apisecret"] as? String == "s3cret-s3cret-s3cret")
        let attach = bridge.received(Self.reply(#"{"janus":"success","transaction":"t1","data":{"id":77}}"#), now: now)
        #expect(Self.fields(attach[0])["plugin"] as? String == "janus.plugin.audiobridge")
        let list = bridge.received(Self.reply(#"{"janus":"success","transaction":"t2","data":{"id":5}}"#), now: now)
        #expect(Self.body(list[0])["request"] as? String == "list")
        #expect(bridge.isReady)
        let none = #"{"janus":"success","transaction":"t3","plugindata":{"data":{"audiobridge":"success","list":[]}}}"#
        #expect(bridge.received(Self.reply(none), now: now).isEmpty)
        return bridge
    }

    @Test("a new link destroys the rooms this node left on Janus (a dropped link, a killed node), and leaves another node's alone")
    func leftOverRooms() {
        func linked() -> (VoiceBridge, [VoiceBridge.Action]) {
            var bridge = VoiceBridge(settings: VoiceBridge.Settings(secret: "s3cret-s3cret-s3cret", maximumRooms: 10))
            _ = bridge.start()
            _ = bridge.opened(now: now)
            _ = bridge.received(Self.reply(#"{"janus":"success","transaction":"t1","data":{"id":77}}"#), now: now)
            let list = bridge.received(Self.reply(#"{"janus":"success","transaction":"t2","data":{"id":5}}"#), now: now)
            return (bridge, list)
        }
        let linkedUp = linked()
        var bridge = linkedUp.0
        let list = linkedUp.1
        #expect(Self.body(list[0])["admin_key"] as? String == "s3cret-s3cret-s3cret", "private rooms are listed only with the admin key")
        let listed = #"{"janus":"success","transaction":"t3","plugindata":{"plugin":"janus.plugin.audiobridge","data":{"audiobridge":"success","list":[{"room":43,"description":"cowatch"},{"room":42,"description":"cowatch n2"},{"room":41,"description":"cowatch"}]}}}"#
        let actions = bridge.received(Self.reply(listed), now: now)
        let destroyed = actions.filter { Self.body($0)["request"] as? String == "destroy" }.compactMap { Self.body($0)["room"] as? Int }
        #expect(destroyed == [41, 43])
        #expect(actions.last == .cleared(2))
        // A refused list (a wrong key) changes nothing; the link serves on.
        var refused = linked().0
        let refusal = #"{"janus":"success","transaction":"t3","plugindata":{"data":{"audiobridge":"event","error_code":481,"error":"Unauthorized"}}}"#
        #expect(refused.received(Self.reply(refusal), now: now).isEmpty)
        #expect(refused.isReady)
    }

    @Test("a first seat makes the Janus room, private and with the secret; the seat's join carries the offer once both are there")
    func join() throws {
        var bridge = ready()
        let actions = bridge.join(room, ann, name: "m1", offer: "v=0 offer", muted: false, now: now)
        #expect(actions.count == 2)
        let create = Self.body(actions[0])
        #expect(create["request"] as? String == "create")
        #expect(create["is_private"] as? Bool == true)
        #expect(create["admin_key"] as? String == "s3cret-s3cret-s3cret")
        #expect(create["audiolevel_event"] as? Bool == true)
        #expect(create["description"] as? String == "cowatch", "the node's mark, for the next link to know its own")
        #expect(Self.fields(actions[1])["janus"] as? String == "attach")
        // The handle first, then the room: the join waits for the room.
        #expect(bridge.received(Self.reply(#"{"janus":"success","transaction":"t5","data":{"id":901}}"#), now: now).isEmpty)
        let joins = bridge.received(Self.reply(#"{"janus":"success","transaction":"t4","plugindata":{"plugin":"janus.plugin.audiobridge","data":{"audiobridge":"created","room":1}}}"#), now: now)
        let join = try #require(joins.first)
        #expect(Self.body(join)["request"] as? String == "join")
        #expect(Self.fields(join)["handle_id"] as? Int == 901)
        #expect((Self.fields(join)["jsep"] as? [String: Any])?["sdp"] as? String == "v=0 offer")
        #expect(bridge.received(Self.reply(#"{"janus":"ack","transaction":"t6"}"#), now: now).isEmpty)
        let joined = bridge.received(Self.reply(#"{"janus":"event","transaction":"t6","sender":901,"plugindata":{"plugin":"janus.plugin.audiobridge","data":{"audiobridge":"joined","room":1,"id":1}},"jsep":{"type":"answer","sdp":"v=0 answer"}}"#), now: now)
        #expect(joined == [.joined(room, ann, answer: "v=0 answer")])
        #expect(bridge.seatCount == 1)
    }

    func seated() -> VoiceBridge {
        var bridge = ready()
        _ = bridge.join(room, ann, name: "m1", offer: "v=0", muted: false, now: now)
        _ = bridge.received(Self.reply(#"{"janus":"success","transaction":"t5","data":{"id":901}}"#), now: now)
        _ = bridge.received(Self.reply(#"{"janus":"success","transaction":"t4","plugindata":{"data":{"audiobridge":"created","room":1}}}"#), now: now)
        _ = bridge.received(Self.reply(#"{"janus":"event","transaction":"t6","sender":901,"plugindata":{"data":{"audiobridge":"joined","room":1,"id":1}},"jsep":{"type":"answer","sdp":"a"}}"#), now: now)
        return bridge
    }

    @Test("talking is told once, whichever handle Janus tells it on; a hangup loses the seat in words")
    func talkingAndHangup() {
        var bridge = seated()
        let talking = #"{"janus":"event","sender":901,"plugindata":{"data":{"audiobridge":"talking","room":1,"id":1}}}"#
        #expect(bridge.received(Self.reply(talking), now: now) == [.speaking(room, ann, true)])
        #expect(bridge.received(Self.reply(talking), now: now).isEmpty)
        let stopped = #"{"janus":"event","sender":902,"plugindata":{"data":{"audiobridge":"stopped-talking","room":1,"id":1}}}"#
        #expect(bridge.received(Self.reply(stopped), now: now) == [.speaking(room, ann, false)])
        let hangup = bridge.received(Self.reply(#"{"janus":"hangup","sender":901,"reason":"ICE failed"}"#), now: now)
        #expect(hangup.contains(.failed(room, ann, reason: "the call ended (ICE failed)")))
        #expect(hangup.contains { Self.fields($0)["janus"] as? String == "detach" })
        #expect(hangup.contains { Self.body($0)["request"] as? String == "destroy" }, "the last seat's room goes")
        #expect(bridge.roomCount == 0)
    }

    @Test("a leave detaches the seat's handle at once (the member is out of the mix), and the empty room is destroyed")
    func leave() {
        var bridge = seated()
        let actions = bridge.leave(room, ann, now: now)
        #expect(Self.fields(actions[0])["janus"] as? String == "detach")
        #expect(Self.fields(actions[0])["handle_id"] as? Int == 901)
        #expect(Self.body(actions[1])["request"] as? String == "destroy")
        #expect(bridge.leave(room, ann, now: now).isEmpty)
    }

    @Test("a room no longer served here lets go of every seat and of its Janus room")
    func forget() {
        var bridge = seated()
        let actions = bridge.forget(room, now: now)
        #expect(actions.contains { Self.fields($0)["janus"] as? String == "detach" })
        #expect(actions.contains { Self.body($0)["request"] as? String == "destroy" })
        #expect(bridge.roomCount == 0)
        #expect(bridge.forget(room, now: now).isEmpty)
    }

    @Test("a mute goes to Janus as the moderator's mute; one asked before the join is sent with it")
    func mute() {
        var bridge = seated()
        let actions = bridge.mute(room, ann, true, now: now)
        #expect(Self.body(actions[0])["request"] as? String == "mute")
        #expect(Self.body(actions[0])["id"] as? Int == 1)
        #expect(bridge.mute(room, ann, true, now: now).isEmpty)
        var early = ready()
        _ = early.join(room, bob, name: "m2", offer: "v=0", muted: false, now: now)
        #expect(early.mute(room, bob, true, now: now).isEmpty)
        _ = early.received(Self.reply(#"{"janus":"success","transaction":"t5","data":{"id":902}}"#), now: now)
        let joins = early.received(Self.reply(#"{"janus":"success","transaction":"t4","plugindata":{"data":{"audiobridge":"created","room":1}}}"#), now: now)
        #expect(Self.body(joins[0])["muted"] as? Bool == true)
    }

    @Test("the rooms with voice are bounded; a link not up refuses in words")
    func limits() {
        var bridge = ready(maximumRooms: 1)
        _ = bridge.join(room, ann, name: "m1", offer: "v=0", muted: false, now: now)
        let other = RoomName("other")!
        #expect(bridge.join(other, bob, name: "m2", offer: "v=0", muted: false, now: now)
            == [.failed(other, bob, reason: "this server's voice is full (1 rooms talk now); try again later")])
        var down = VoiceBridge(settings: VoiceBridge.Settings(secret: "s", maximumRooms: 1))
        #expect(down.join(room, ann, name: "m1", offer: "v=0", muted: false, now: now)
            == [.failed(room, ann, reason: "the media server is out of reach; try again shortly")])
    }

    @Test("the link's loss ends every room's seats, and a new link is tried later, later after each failure")
    func linkLost() {
        var bridge = seated()
        #expect(bridge.closed(now: now) == [.ended(room, reason: "the media server went away; join again when it is back")])
        #expect(bridge.roomCount == 0)
        #expect(bridge.tick(now: now + .milliseconds(100)).isEmpty)
        #expect(bridge.tick(now: now + .seconds(1.1)) == [.connect])
        #expect(bridge.closed(now: now + .seconds(2)).isEmpty)
        #expect(bridge.tick(now: now + .seconds(3.5)).isEmpty)
        #expect(bridge.tick(now: now + .seconds(4.1)) == [.connect])
    }

    @Test("keepalives every 15 s; a request unanswered for 10 s fails its seat; Janus forgetting the session closes the link")
    func timers() {
        var bridge = ready()
        let keepalive = bridge.tick(now: now + .seconds(15))
        #expect(Self.fields(keepalive[0])["janus"] as? String == "keepalive")
        #expect(bridge.tick(now: now + .seconds(16)).isEmpty)
        _ = bridge.join(room, ann, name: "m1", offer: "v=0", muted: false, now: now + .seconds(16))
        let late = bridge.tick(now: now + .seconds(27))
        #expect(late.contains(.failed(room, ann, reason: "the media server did not answer")))
        #expect(bridge.received(Self.reply(#"{"janus":"timeout","session_id":77}"#), now: now) == [.disconnect])
    }

    @Test("an offer is audio alone in printable lines, or refused in words")
    func offers() {
        let sdp = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nt=0 0\r\nm=audio 9 UDP/TLS/RTP/SAVPF 111\r\n"
        #expect(VoiceConfiguration.offer(fromBase64: Data(sdp.utf8).base64EncodedString()) == .success(sdp))
        #expect(VoiceConfiguration.offer(fromBase64: "not base64!") == .failure(.notBase64))
        let video = sdp + "m=video 9 UDP/TLS/RTP/SAVPF 96\r\n"
        #expect(VoiceConfiguration.offer(fromBase64: Data(video.utf8).base64EncodedString()) == .failure(.notAudio))
        #expect(VoiceConfiguration.offer(fromBase64: Data("v=0\r\n\u{1}".utf8).base64EncodedString()) == .failure(.notText))
    }

    @Test("a ticket's TURN credentials are TURN's REST form: expiry:who, signed with HMAC-SHA1 and the shared secret")
    func ticket() throws {
        var configuration = VoiceConfiguration()
        configuration.turnURLs = ["turn:127.0.0.1:3478?transport=udp"]
        configuration.turnSecret = "shared-secret-of-the-turn-server"
        configuration.credentialLifetime = .seconds(3600)
        let ticket = configuration.ticket(for: MemberID("m3"), of: room, now: ServerInstant(milliseconds: 1_700_000_000_000))
        let turn = try #require(ticket.iceServers.first)
        #expect(turn.username == "1700003600:lobby.m3")
        // printf %s 1700003600:lobby.m3 | openssl dgst -sha1 -hmac shared-secret-of-the-turn-server -binary | base64
        #expect(turn.credential == "Zx+rxlw5qzg6YRtepn8IChNq1vs=")
        #expect(ticket.expires == ServerInstant(milliseconds: 1_700_003_600_000))
    }
}
