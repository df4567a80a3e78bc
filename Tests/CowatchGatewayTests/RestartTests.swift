import CowatchClient
import CowatchStore
import Foundation
import Testing

/// Nothing lost on restart: the real binary, killed with SIGKILL mid-activity.
@Suite("Restart on the same data", .serialized)
struct RestartTests {
    static func dataDirectory() -> String { NSTemporaryDirectory() + "cowatch-restart-\(UUID().uuidString)" }

    static func member(_ clients: WebSocketClients, _ server: ServerProcess, _ path: String) throws -> TestMember {
        let member = TestMember(name: path, encoding: .json)
        member.connection = clients.connect(server.address(path), encoding: .json, handlers: member.handlers)
        guard member.event("welcome", timeout: 10) != nil else { throw TestFailure("no welcome on \(path)") }
        return member
    }

    @Test("kill -9 mid-activity, restart: rooms, queue, chat, roles and suspensions are back, playback continues at the right position")
    func killAndRestart() throws {
        let data = Self.dataDirectory()
        let clients = try WebSocketClients()
        defer { clients.shutdown() }

        let first = try ServerProcess(arguments: ["--data-dir", data])
        let alice = try Self.member(clients, first, "/rooms/movie?name=alice&player=1")
        let bob = try Self.member(clients, first, "/rooms/movie?name=bob")
        let token = try #require(alice.allFrames.compactMap { JSONObject($0) }.first?.string("resume"))
        let aliceID = alice.allFrames.compactMap { JSONObject($0) }.first?.object("you")?.string("id")
        alice.send("/watch https://example.org/a.mp4 Episode 1\n/queue https://example.org/b.mp4 Episode 2\n/seek 30\n/play now")
        let playing = try #require(bob.state("playing", timeout: 10))
        bob.send("/suspend audioSessionInterrupted\nhello before the crash")
        _ = alice.event("chat") { $0.string("text") == "hello before the crash" }
        let carol = try Self.member(clients, first, "/rooms/other?name=carol")
        carol.send("/watch https://example.org/c.mp4\n/seek 10")
        _ = carol.event("state") { $0.object("playback")?.number("position") == 10 }
        try first.waitUntilWritten()
        first.kill9()

        let second = try ServerProcess(arguments: ["--data-dir", data])
        defer { _ = second.terminate() }
        let back = try Self.member(clients, second, "/rooms/movie?resume=\(token)")
        let welcome = try #require(back.allFrames.compactMap { JSONObject($0) }.first)
        #expect(welcome.object("you")?.string("id") == aliceID)
        #expect(welcome.object("you")?.string("role") == "host")
        #expect(welcome.array("chat")?.map { $0.string("text") } == ["hello before the crash"])
        let bobAfter = welcome.array("participants")?.first { $0.string("name") == "bob" }
        #expect(bobAfter?.strings("suspensions") == ["audioSessionInterrupted"])
        #expect(bobAfter?.bool("connected") == false)

        let state = try #require(back.event("state"))
        #expect((state.int("seq") ?? 0) >= (playing.int("seq") ?? Int64.max))
        #expect(state.array("queue")?.map { $0.string("title") } == ["Episode 2"])
        let playback = try #require(state.object("playback"))
        #expect(playback.string("status") == "playing")
        #expect(playback.int("at") == playing.object("playback")?.int("at"))
        #expect(playback.number("position") == 30)

        let other = try Self.member(clients, second, "/rooms/other?name=dave")
        let otherState = try #require(other.event("state"))
        #expect(otherState.object("playback")?.string("status") == "paused")
        #expect(otherState.object("playback")?.number("position") == 10)
    }

    @Test("a database from a newer Cowatch stops the server with a clear message and a failing exit")
    func newerDatabase() throws {
        let data = Self.dataDirectory()
        let first = try ServerProcess(arguments: ["--data-dir", data])
        #expect(first.terminate() == 0)
        let python = Process()
        python.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        python.arguments = ["python3", "-c", "import sqlite3; c=sqlite3.connect('\(data)/cowatch.sqlite'); c.execute('PRAGMA user_version = 42'); c.commit()"]
        try python.run()
        python.waitUntilExit()
        let (status, output) = try ServerProcess.run(["serve", "--port", "0", "--data-dir", data])
        #expect(status != 0)
        #expect(output.contains("schema version 42, newer than this binary's"))
    }

    @Test("a corrupted database stops the server with a clear message, not a crash")
    func corruptedDatabase() throws {
        let data = Self.dataDirectory()
        try FileManager.default.createDirectory(atPath: data, withIntermediateDirectories: true)
        try Data(repeating: 7, count: 4096).write(to: URL(fileURLWithPath: data + "/cowatch.sqlite"))
        let (status, output) = try ServerProcess.run(["serve", "--port", "0", "--data-dir", data])
        #expect(status == 1)
        #expect(output.contains("cannot use the store at"))
    }

    @Test("an operator's saved state that cannot be read is logged, and the server starts without it")
    func unreadableOperatorState() throws {
        let data = Self.dataDirectory()
        let store = try SQLiteStore(directory: data, chatLimit: 10)
        store.write([.serverState(name: "operator", json: "{\"bannedAddresses\": [broken")])
        store.flush()
        store.close()
        let clients = try WebSocketClients()
        defer { clients.shutdown() }
        let server = try ServerProcess(arguments: ["--data-dir", data])
        _ = try Self.member(clients, server, "/rooms/after?name=alice")
        #expect(server.terminate() == 0)
        #expect((server.startOutput + server.remainingOutput()).contains("the operator's saved state cannot be read"))
    }

    @Test("serve's help names every store, postgres among them")
    func storeHelp() throws {
        let (status, output) = try ServerProcess.run(["serve", "--help"])
        #expect(status == 0)
        #expect(output.contains("sqlite") && output.contains("memory") && output.contains("postgres (one database"))
    }

    @Test("a bad setting stops the server with where it came from")
    func badSetting() throws {
        let (status, output) = try ServerProcess.run(["serve", "--port", "seventy"])
        #expect(status != 0)
        #expect(output.contains("--port: expected a whole number from 0 to 65535, got \"seventy\""))
    }
}

@Suite("One server per data directory", .serialized)
struct DataDirectoryLockTests {
    @Test("a second server on the same data directory refuses to start, saying why; after the first stops, it starts")
    func secondServerRefused() throws {
        let data = RestartTests.dataDirectory()
        let first = try ServerProcess(arguments: ["--data-dir", data])
        let second = Process()
        second.executableURL = URL(fileURLWithPath: ServerProcess.binary)
        second.arguments = ["serve", "--port", "0", "--data-dir", data]
        let output = Pipe()
        second.standardOutput = output
        second.standardError = output
        try second.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        second.waitUntilExit()
        #expect(second.terminationStatus != 0)
        #expect(text.contains("another cowatch serve (pid"), "\(text)")
        #expect(text.contains("--data-dir"))
        first.kill9()
        let third = try ServerProcess(arguments: ["--data-dir", data])
        _ = third.terminate()
    }
}
