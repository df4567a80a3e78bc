import CowatchClient
import CowatchTime
import Foundation

/// One room's members as the load generator sees them, and its controller's
/// commands during a phase. Its members may live on different client contexts,
/// so everything is behind `lock`.
///
/// Each command brings exactly one `state` (the plan only sends commands that
/// change the state; with players, a `/play` brings a `waiting` state too, which
/// every member answers with `/ready` and which is not counted), so the n-th new
/// `seq` the room sees after a phase begins is the result of its n-th command,
/// whichever member sees it first. In the text encoding, where states carry no
/// number, a member's n-th state line of the phase is the result of the n-th
/// command.
///
/// With several servers (the nodes of a cluster), the members are in two groups:
/// those connected to the first server, where the room lives, and the others,
/// whose states the first relays through their nodes. Each group's latencies,
/// and the latency to each group's last member, are kept apart as well.
final class BenchRoom: @unchecked Sendable {
    /// What a phase measured in this room.
    struct Outcome {
        var memberLatencies: [UInt64]
        var lastMemberLatencies: [UInt64]
        var sent: Int
        var firstSend: UInt64?
        var lastCompletion: UInt64
        var frames: Int
        var refusals: Int
        /// With two groups: each group's latencies, and to its last member.
        var groupLatencies: [[UInt64]]
        var groupLastLatencies: [[UInt64]]
    }

    let memberCount: Int
    let encoding: ClientEncoding
    let reading: FrameReading
    /// Members answer `waiting` states with `/ready` (`LoadPlan.players`).
    let players: Bool
    weak var generator: LoadGenerator?
    /// Per member, its group: 0 on the first server, 1 on another. Nil with one
    /// server, where nothing is kept per group.
    private let groups: [Int]?

    private let lock = NSLock()
    private var connections: [ClientConnection?]
    private var stateCount: [Int]
    private var frames = 0
    private var roomSeq = -1
    private var refusals = 0

    // The current phase.
    private var commands: [String] = []
    /// Closed loop: the next command goes when the previous one has reached
    /// every participant. Otherwise the generator's schedule sends them.
    private var selfPaced = false
    /// Members 0..<participants take part; the others are not connected yet.
    private var participants = 0
    private var sentAt: [UInt64] = []
    /// Participants that have each command's state.
    private var reached: [Int] = []
    private var completedCommands = 0
    /// The seq each command brought, in command order (JSON).
    private var commandSeqs: [Int] = []
    private var baseSeq = -1
    /// Per member, the last command whose state it had; -1 for none this phase.
    private var memberCommand: [Int]
    private var memberLatencies: [UInt64] = []
    private var lastMemberLatencies: [UInt64] = []
    /// With groups: participants in each, how many of each have each command's
    /// state, and the latencies per group.
    private var groupParticipants = [0, 0]
    private var groupReached: [[Int]] = [[], []]
    private var groupLatencies: [[UInt64]] = [[], []]
    private var groupLastLatencies: [[UInt64]] = [[], []]
    private var lastCompletion: UInt64 = 0
    private var framesAtStart = 0
    private var framesAtCompletion = 0
    private var refusalsAtStart = 0

    /// `onFirstServer` tells, with several servers, whether a member connects to
    /// the first; nil with one server.
    init(members: Int, encoding: ClientEncoding, reading: FrameReading, players: Bool = false,
         onFirstServer: ((Int) -> Bool)? = nil) {
        self.memberCount = members
        self.encoding = encoding
        self.reading = reading
        self.players = players
        groups = onFirstServer.map { first in (0..<members).map { first($0) ? 0 : 1 } }
        connections = Array(repeating: nil, count: members)
        stateCount = Array(repeating: 0, count: members)
        memberCommand = Array(repeating: -1, count: members)
    }

    var frameCount: Int { lock.withLock { frames } }

    var outcome: Outcome {
        lock.withLock {
            Outcome(memberLatencies: memberLatencies, lastMemberLatencies: lastMemberLatencies, sent: sentAt.count,
                    firstSend: sentAt.first, lastCompletion: lastCompletion,
                    frames: framesAtCompletion - framesAtStart, refusals: refusals - refusalsAtStart,
                    groupLatencies: groupLatencies, groupLastLatencies: groupLastLatencies)
        }
    }

    func attach(_ connection: ClientConnection, as member: Int) {
        lock.withLock { connections[member] = connection }
    }

    /// Starts a phase of `commands`. A closed loop sends the first one now and
    /// each next one when the previous has reached the first `participants`
    /// members; otherwise `sendNext` sends them.
    func begin(commands: [String], closedLoop: Bool, participants: Int) {
        let first = lock.withLock { () -> (ClientConnection, String)? in
            self.commands = commands
            selfPaced = closedLoop
            self.participants = min(participants, memberCount)
            sentAt = []
            sentAt.reserveCapacity(commands.count)
            reached = Array(repeating: 0, count: commands.count)
            completedCommands = 0
            commandSeqs = []
            commandSeqs.reserveCapacity(commands.count)
            baseSeq = roomSeq
            for member in memberCommand.indices { memberCommand[member] = -1 }
            memberLatencies = []
            memberLatencies.reserveCapacity(commands.count * self.participants)
            lastMemberLatencies = []
            lastMemberLatencies.reserveCapacity(commands.count)
            if let groups {
                groupParticipants = [0, 0]
                for member in 0..<self.participants { groupParticipants[groups[member]] += 1 }
                groupReached = groupParticipants.map { _ in Array(repeating: 0, count: commands.count) }
                groupLatencies = groupParticipants.map { _ in [] }
                groupLastLatencies = groupParticipants.map { _ in [] }
            }
            lastCompletion = 0
            framesAtStart = frames
            framesAtCompletion = frames
            refusalsAtStart = refusals
            if commands.isEmpty { return nil }
            return closedLoop ? prepareNext() : nil
        }
        if let (connection, command) = first { connection.send(command) }
    }

    /// Sends the phase's next command (the generator's schedule calls this);
    /// false when there is none or no controller.
    @discardableResult
    func sendNext() -> Bool {
        guard let (connection, command) = lock.withLock({ prepareNext() }) else { return false }
        connection.send(command)
        return true
    }

    /// Records the next command's sending and returns what to send. Called with
    /// `lock` held.
    private func prepareNext() -> (ClientConnection, String)? {
        guard sentAt.count < commands.count, let controller = connections[0] else { return nil }
        let command = commands[sentAt.count]
        sentAt.append(SystemClock.monotonicNanoseconds())
        return (controller, command)
    }

    func received(_ text: String, from member: Int) {
        let frame = reading.read(text, encoding: encoding)
        let seq = frame.stateSeq
        if frame.isError, member == 0 {
            lock.withLock { refusals += 1 }
            generator?.commandRefused()
        }
        if players, let seq, frame.waiting {
            let connection = lock.withLock { () -> ClientConnection? in
                frames += 1
                return connections[member]
            }
            connection?.send("/ready \(seq)")
            return
        }
        var welcomed = false, finished = false
        let next = lock.withLock { () -> (ClientConnection, String)? in
            frames += 1
            guard let seq else { return nil }
            stateCount[member] += 1
            if stateCount[member] == 1 { welcomed = true }
            let fresh = seq > roomSeq
            if fresh { roomSeq = seq }
            guard let command = command(for: seq, fresh: fresh, member: member), member < participants,
                  command > memberCommand[member] else { return nil }
            memberCommand[member] = command
            let now = SystemClock.monotonicNanoseconds()
            memberLatencies.append(now - sentAt[command])
            reached[command] += 1
            if let groups {
                let group = groups[member]
                groupLatencies[group].append(now - sentAt[command])
                groupReached[group][command] += 1
                if groupReached[group][command] == groupParticipants[group] {
                    groupLastLatencies[group].append(now - sentAt[command])
                }
            }
            guard reached[command] == participants else { return nil }
            lastMemberLatencies.append(now - sentAt[command])
            lastCompletion = now
            framesAtCompletion = frames
            completedCommands += 1
            if completedCommands == commands.count {
                finished = true
                return nil
            }
            return selfPaced && command == sentAt.count - 1 ? prepareNext() : nil
        }
        if let (connection, command) = next { connection.send(command) }
        if welcomed { generator?.memberWelcomed() }
        if finished { generator?.roomFinished() }
    }

    /// Which of the phase's sent commands a state received by `member` answers,
    /// or nil for a state from before the phase. Called with `lock` held.
    private func command(for seq: Int, fresh: Bool, member: Int) -> Int? {
        switch encoding {
        case .text:
            let next = memberCommand[member] + 1
            return next < sentAt.count ? next : nil
        case .json:
            guard seq > baseSeq else { return nil }
            if fresh {
                guard commandSeqs.count < sentAt.count else { return nil }
                commandSeqs.append(seq)
                return commandSeqs.count - 1
            }
            return Self.index(of: seq, in: commandSeqs)
        }
    }

    /// Binary search in increasing seqs.
    private static func index(of seq: Int, in seqs: [Int]) -> Int? {
        var low = 0, high = seqs.count
        while low < high {
            let middle = (low + high) / 2
            if seqs[middle] < seq { low = middle + 1 } else { high = middle }
        }
        return low < seqs.count && seqs[low] == seq ? low : nil
    }
}
