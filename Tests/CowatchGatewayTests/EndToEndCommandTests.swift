import Foundation
import Testing

/// Every room command through real sockets, with two or more members watching
/// the results arrive.
@Suite("Commands end to end")
struct EndToEndCommandTests {
    @Test("watch, play, pause, seek and rate reach every member as the same states")
    func transport() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob")
        alice.send("/watch https://example.org/a.mp4 Episode 1")
        for member in [alice, bob] {
            let state = try #require(member.state("paused"))
            #expect(state.object("session")?.object("activity")?.string("title") == "Episode 1")
            #expect(state.object("playback")?.string("cause") == "watch")
        }
        alice.send("/play")
        let playingA = try #require(alice.state("playing"))
        let playingB = try #require(bob.state("playing"))
        #expect(playingA.int("seq") == playingB.int("seq"))
        #expect(playingA.object("playback")?.int("at") == playingB.object("playback")?.int("at"))

        bob.send("/pause")
        #expect(alice.state("paused")?.object("playback")?.string("by") == bob.id)
        bob.send("/seek 1:23")
        #expect(alice.state("paused")?.object("playback")?.number("position") == 83)
        bob.send("/seek -20")
        #expect(alice.state("paused")?.object("playback")?.number("position") == 63)
        alice.send("/rate 1.5")
        #expect(bob.event("state") { $0.object("playback")?.number("rate") == 1.5 } != nil)
        alice.send("/play now")
        #expect(bob.state("playing")?.object("playback")?.number("position") == 63)
    }

    @Test("chat, //chat, /me and /nick are seen by everyone")
    func chat() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob", encoding: .text)
        alice.send("hello\n//slash\n/me waves")
        #expect(bob.next { $0 == "<alice> hello" } != nil)
        #expect(bob.next { $0 == "<alice> /slash" } != nil)
        #expect(bob.next { $0 == "*<alice> waves" } != nil)
        bob.send("/nick robert")
        #expect(alice.event("participant") { $0.object("participant")?.string("name") == "robert" } != nil)
        let carol = try server.join(name: "alice")
        #expect(carol.allFrames.first?.contains("\"you\":{\"id\":\"m3\",\"name\":\"alice-2\"") == true)
    }

    @Test("informational commands answer the sender alone")
    func informational() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob")
        alice.send("/who")
        let who = try #require(alice.event("reply") { $0.string("command") == "who" })
        #expect(who.array("participants")?.map { $0.string("name") } == ["alice", "bob"])
        alice.send("/help seek")
        #expect(alice.event("reply") { $0.string("command") == "help" }?.string("text")?.contains("/seek <time>") == true)
        alice.send("/status")
        #expect(alice.event("reply") { $0.string("command") == "status" } != nil)
        alice.send("/policy")
        #expect(alice.event("reply") { $0.string("command") == "policy" }?.object("policy")?.string("control") == "everyone")
        alice.send("/time 12345")
        let time = try #require(alice.event("time"))
        #expect(time.number("client") == 12345)
        #expect((time.int("server") ?? 0) > 1_700_000_000_000)
        bob.send("/queue")
        #expect(bob.event("reply") { $0.string("command") == "queue" } != nil)
        // bob's answer came, so his /queue was read before alice's round trip.
        #expect(try #require(alice.untilRoundTrip()).allSatisfy { $0.string("type") != "reply" })
    }

    @Test("a terminal member who arrives after /queue, /lock or /password is told what is playing")
    func arrivalAfterAPolicyChange() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        alice.send("/watch https://example.org/a.mp4 Episode 1")
        #expect(alice.state("paused") != nil)
        var query = ""
        for (index, line) in ["/queue https://example.org/b.mp4 Two", "/password hunter22", "/lock\n/invite 5 30"].enumerated() {
            // The answer to /time follows the line's effects: the room has them when a newcomer comes.
            alice.send("\(line)\n/time \(index + 1)")
            if index == 1 { query = "password=hunter22" }
            if index == 2, let token = alice.event("reply", where: { $0.string("command") == "invite" })?.string("token") {
                query = "invite=\(token)"
            }
            #expect(alice.event("time") { $0.number("client") == Double(index + 1) } != nil, "\(line)")
            let newcomer = try server.join(name: "t\(index)", encoding: .text, query: query)
            #expect(newcomer.next { $0.hasPrefix("= paused \"Episode 1\"") } != nil, "after \(line)")
            newcomer.close()
        }
    }

    @Test("queue, next, autoplay and ended move the room along")
    func queueAndAutoplay() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice", query: "player=1")
        let bob = try server.join(name: "bob")
        alice.send("/watch https://example.org/1.mp4 One")
        bob.send("/queue https://example.org/2.mp4 Two\n/queue https://example.org/3.mp4 Three")
        #expect(alice.event("state") { $0.array("queue")?.count == 2 } != nil)
        bob.send("/next")
        let current = try #require(alice.event("state") { $0.object("session")?.object("activity")?.string("title") == "Two" })
        #expect(current.object("playback")?.string("cause") == "next")
        bob.send("/autoplay on")
        alice.send("/play")
        let waiting = try #require(alice.state("waiting"))
        alice.send("/ready \(waiting.int("seq") ?? -1)")
        let playing = try #require(alice.state("playing"))
        alice.send("/ended \(playing.int("seq") ?? -1)")
        let three = try #require(bob.event("state") { $0.object("session")?.object("activity")?.string("title") == "Three" })
        #expect(three.object("playback")?.string("status") == "waiting")
    }

    @Test("join, leave and end: leaving is for me, ending is for everyone")
    func sessionLifecycle() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        let bob = try server.join(name: "bob", query: "join=0")
        alice.send("/watch https://example.org/a.mp4")
        #expect(bob.state("paused") != nil)
        bob.send("/play")
        #expect(bob.error()?.string("code") == "no-session")
        bob.send("/join")
        #expect(alice.event("participant") { $0.object("participant")?.bool("joined") == true && $0.object("participant")?.string("name") == "bob" } != nil)
        bob.send("/leave")
        #expect(alice.event("participant") { $0.string("change") == "left" } != nil)
        alice.send("/end")
        let ended = try #require(bob.state("idle"))
        #expect(ended.object("session")?.string("state") == "invalidated")
        #expect(ended.object("session")?.string("reason") == "ended")
    }

    @Test("an unknown command or bad arguments answer the sender and keep the connection")
    func refusals() throws {
        let server = try TestServer()
        defer { server.stop() }
        let alice = try server.join(name: "alice", encoding: .text)
        let bob = try server.join(name: "bob")
        alice.send("/foo")
        #expect(alice.next { $0 == "! unknown command /foo (try /help)" } != nil)
        bob.send("/seek soon")
        let error = try #require(bob.error())
        #expect(error.string("code") == "bad-arguments")
        #expect(error.string("command") == "seek")
        #expect(error.string("message")?.contains("usage: /seek <time>") == true)
        alice.send("still here")
        #expect(bob.event("chat") { $0.string("text") == "still here" } != nil)
    }
}

extension TestMember {
    /// This member's id, from its welcome.
    var id: String? {
        allFrames.lazy.compactMap { JSONObject($0) }.first { $0.string("type") == "welcome" }?.object("you")?.string("id")
    }

    func state(_ status: String, timeout: Double = 5, where predicate: (JSONObject) -> Bool) -> JSONObject? {
        event("state", timeout: timeout) { $0.object("playback")?.string("status") == status && predicate($0) }
    }
}

@Suite("cowatch connect as a bot pipe", .serialized)
struct BotPipeTests {
    /// Runs `cowatch connect` with `input` on its stdin: exit status, stdout, stderr.
    static func pipe(_ server: TestServer, _ input: String, _ extra: [String] = []) throws -> (Int32, String, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: ServerProcess.binary)
        process.arguments = ["connect", "ws://127.0.0.1:\(server.port)/rooms/pipes", "--name", "bot"] + extra
        let stdin = Pipe(), stdout = Pipe(), stderr = Pipe()
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
        let out = String(decoding: stdout.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let err = String(decoding: stderr.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, out, err)
    }

    @Test("a pipe whose line the server refused exits 1 with the refusal on stderr; --keep-going exits 0")
    func refusalsFailThePipe() throws {
        let server = try TestServer()
        defer { server.stop() }
        let (status, _, stderr) = try Self.pipe(server, "/watch https://example.org/a.mp4 A\n/bogus\n")
        #expect(status == 1)
        #expect(stderr.contains("refused 1 line(s): unknown command /bogus"), "\(stderr)")
        #expect(try Self.pipe(server, "/bogus\n", ["--keep-going"]).0 == 0)
        #expect(try Self.pipe(server, "/who\n").0 == 0)
    }

    @Test("/quit leaves: the lines after it are not sent")
    func quitLeaves() throws {
        let server = try TestServer()
        defer { server.stop() }
        let watcher = try server.join("pipes", name: "watcher")
        let (status, _, _) = try Self.pipe(server, "before quit\n/quit\nafter quit\n")
        #expect(status == 0)
        #expect(watcher.event("chat") { $0.string("text") == "before quit" } != nil)
        #expect(watcher.event("chat", timeout: 1) { $0.string("text") == "after quit" } == nil)
    }
}
