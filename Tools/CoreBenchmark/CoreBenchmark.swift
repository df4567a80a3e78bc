import CowatchCore
import CowatchTime
import SlashCommands

/// Commands per second through one room, the core alone: no sockets. Each
/// broadcast is encoded once (JSON and text), as the gateway does, so the figure
/// includes what the gateway pays before fanning bytes out. Then what a password
/// check costs at the door, and what the protocol's decoder costs per state frame.
///
/// Usage: CoreBenchmark [rounds]   (run in release: `commands/bench core`)
@main
struct CoreBenchmark {
    static func main() {
        let arguments = CommandLine.arguments.dropFirst()
        let rounds = arguments.first.flatMap { Int($0) } ?? 20_000
        print("core benchmark: \(rounds) rounds of /pause, /play, /seek +5 per case")
        print("members  players  commands  seconds  commands/s  broadcasts/s  ns/command")
        for (members, players) in [(10, 0), (100, 0), (1_000, 0), (1_000, 10)] {
            let result = run(members: members, players: players, rounds: rounds)
            print(result.row)
        }
        let hashing = RoomConfiguration().passwordHashing
        let micros = passwordCheck(attempts: 300)
        print("password check at the door (scrypt N=\(hashing.cost), r=\(hashing.blockSize), p=\(hashing.parallelism)): "
            + "\(NumberText.decimal(micros, places: 1)) us per connection")
        let (frameBytes, head, full) = frameReading(rounds: rounds * 10)
        print("reading a state frame of \(frameBytes) bytes (JSONEventDecoding): head \(NumberText.decimal(head, places: 0)) ns, "
            + "the whole event \(NumberText.decimal(full, places: 0)) ns")
    }

    /// What the protocol's decoder costs per state frame, as a room writes it with
    /// a link playing: its head (what the load generator reads of every frame) and
    /// the whole event (what the desktop player and the bridges read).
    static func frameReading(rounds: Int) -> (bytes: Int, headNanoseconds: Double, fullNanoseconds: Double) {
        let now = ServerInstant(milliseconds: 1_700_000_000_000)
        guard let name = RoomName("frames"), let url = MediaURL("https://media.example/episode-1.mp4") else { return (0, 0, 0) }
        var room = Room(name: name, now: now)
        guard case .accepted(let host, _) = room.connectionOpened(ConnectRequest(name: "host", newToken: "h"), now: now) else {
            return (0, 0, 0)
        }
        _ = room.receive(.watch(url, title: "Episode 1"), from: host, now: now)
        _ = room.receive(.play(now: false), from: host, now: now)
        var frame = String(decoding: JSONEventEncoding.encode(.state(room.state)), as: UTF8.self)
        let clock = ContinuousClock()
        var seqs: Int64 = 0
        let headStart = clock.now
        for _ in 0..<rounds {
            seqs &+= frame.withUTF8 { (try? JSONEventDecoding.head($0))?.seq ?? 0 }
        }
        let headTime = clock.now - headStart
        let fullRounds = max(1, rounds / 10)
        let fullStart = clock.now
        for _ in 0..<fullRounds {
            if case .state(let state)? = try? JSONEventDecoding.decode(frame) { seqs &+= state.seq }
        }
        let fullTime = clock.now - fullStart
        // Used, so that the reads are not optimised away.
        if seqs == -1 { print(seqs) }
        func nanoseconds(_ duration: Duration, _ count: Int) -> Double {
            (Double(duration.components.seconds) * 1e9 + Double(duration.components.attoseconds) / 1e9) / Double(count)
        }
        return (frame.utf8.count, nanoseconds(headTime, rounds), nanoseconds(fullTime, fullRounds))
    }

    /// What a connection to a room with a password costs the service thread: each
    /// attempt, from its own address, hashes the password it brings.
    static func passwordCheck(attempts: Int) -> Double {
        let now = ServerInstant(milliseconds: 1_700_000_000_000)
        guard let name = RoomName("locked") else { return 0 }
        var room = Room(name: name, now: now)
        guard case .accepted(let host, _) = room.connectionOpened(ConnectRequest(name: "host", newToken: "h"), now: now) else {
            return 0
        }
        _ = room.receive(.password("correct horse"), from: host, now: now)
        let clock = ContinuousClock()
        let start = clock.now
        for attempt in 0..<attempts {
            let request = ConnectRequest(name: "guest", newToken: "t\(attempt)", address: "10.0.\(attempt / 250).\(attempt % 250)",
                                         password: "wrong \(attempt)")
            _ = room.connectionOpened(request, now: now)
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        return seconds * 1e6 / Double(attempts)
    }

    struct Result {
        var members: Int
        var players: Int
        var commands: Int
        var broadcasts: Int
        var seconds: Double

        var row: String {
            func pad(_ text: String, _ width: Int) -> String {
                String(repeating: " ", count: Swift.max(0, width - text.count)) + text
            }
            let perSecond = Double(commands) / seconds
            return pad("\(members)", 7) + pad("\(players)", 9) + pad("\(commands)", 10)
                + pad(NumberText.decimal(seconds, places: 3), 9)
                + pad("\(Int(perSecond))", 12)
                + pad("\(Int(Double(broadcasts) / seconds))", 14)
                + pad("\(Int(seconds * 1e9 / Double(commands)))", 12)
        }
    }

    static func run(members: Int, players: Int, rounds: Int) -> Result {
        var now = ServerInstant(milliseconds: 1_700_000_000_000)
        guard let name = RoomName("bench"), let url = MediaURL("https://example.org/bench.mp4") else {
            fatalError("the benchmark's own room name and URL are valid")
        }
        var room = Room(name: name,
                        configuration: RoomConfiguration(maximumMembers: members), now: now)
        var ids: [MemberID] = []
        for index in 0..<members {
            let request = ConnectRequest(name: "member\(index)", player: index < players, newToken: "t\(index)")
            if case .accepted(let id, _) = room.connectionOpened(request, now: now) { ids.append(id) }
        }
        let controller = ids[0]
        let playerIDs = Array(ids.prefix(players))
        _ = room.receive(.watch(url, title: "Bench"), from: controller, now: now)

        var commands = 0
        var broadcasts = 0
        var encodedBytes = 0
        func execute(_ actions: [RoomAction]) {
            for action in actions {
                if case .broadcast(let event, _) = action {
                    broadcasts += 1
                    encodedBytes += JSONEventEncoding.encode(event).count
                    encodedBytes += TextEventEncoding.lines(event).count
                }
            }
        }
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<rounds {
            now = now.advanced(by: ServerInterval(milliseconds: 100))
            execute(room.receive(.pause, from: controller, now: now))
            execute(room.receive(.play(now: false), from: controller, now: now))
            commands += 2
            for player in playerIDs {
                execute(room.receive(.ready(seq: room.state.seq, lead: 0), from: player, now: now))
                commands += 1
            }
            execute(room.receive(.seek(.relative(5)), from: controller, now: now))
            commands += 1
            for player in playerIDs {
                execute(room.receive(.ready(seq: room.state.seq, lead: 0), from: player, now: now))
                commands += 1
            }
        }
        let elapsed = clock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        precondition(encodedBytes > 0)
        return Result(members: members, players: players, commands: commands, broadcasts: broadcasts, seconds: seconds)
    }
}
