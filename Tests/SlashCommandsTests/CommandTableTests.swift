import Foundation
import SlashCommands
import Testing

@Suite("Command table, /help and docs/commands.md")
struct CommandTableTests {
    @Test("every CommandName has exactly one spec, in CommandName order")
    func oneSpecPerCommand() {
        let names = CommandTable.specs.map(\.name)
        #expect(names == CommandName.allCases)
        #expect(Set(names).count == names.count)
        for name in CommandName.allCases {
            #expect(CommandTable.spec(name).name == name)
            #expect(CommandTable.specs.filter { $0.name == name }.count == 1)
        }
    }

    @Test("every spec has a one-sentence summary and a usage starting with its name", arguments: CommandName.allCases)
    func specIsComplete(_ name: CommandName) {
        let spec = CommandTable.spec(name)
        #expect(!spec.summary.isEmpty)
        #expect(spec.summary.hasSuffix("."))
        #expect(!spec.summary.contains("\n"))
        #expect(spec.usage == "/\(name.rawValue)" || spec.usage.hasPrefix("/\(name.rawValue) "))
    }

    @Test("usages read as in the contract")
    func usages() {
        #expect(CommandTable.spec(.seek).usage == "/seek <time>")
        #expect(CommandTable.spec(.join).usage == "/join")
        #expect(CommandTable.spec(.help).usage == "/help [command|players]")
        #expect(CommandTable.spec(.watch).usage == "/watch <url> [title...]")
        #expect(CommandTable.spec(.resume).usage == "/resume [reason] [at <time>]")
        #expect(CommandTable.spec(.autoplay).usage == "/autoplay on|off")
        #expect(CommandTable.spec(.policy).usage == "/policy [control everyone|hosts] [stall continue|wait] [wait <seconds>]")
        #expect(CommandTable.spec(.time).usage == "/time <client-ms>")
    }

    @Test("/help lists people's commands under headings, one line each in table order, and ends with how to leave")
    func helpListsPeoplesCommands() {
        let lines = CommandReference.helpLines()
        let people = CommandTable.specs.filter { CommandReference.group(of: $0) != .players }
        let headings = CommandReference.Group.allCases.filter { $0 != .players }.map { "\($0.rawValue):" }
        #expect(lines.count == people.count + headings.count + 2)
        #expect(lines.last == "To leave: close the page, or Ctrl-D (or /quit) in cowatch connect.")
        #expect(lines.first?.contains("/help players") == true)
        #expect(lines.dropFirst().filter { $0.hasSuffix(":") && !$0.hasPrefix("/") } == headings)
        let commandLines = lines.filter { $0.hasPrefix("/") }
        #expect(commandLines.count == people.count)
        for spec in people {
            #expect(commandLines.contains("\(spec.usage) - \(spec.summary)"), "/help lacks \(spec.usage)")
        }
    }

    @Test("players' reports are under /help players, not in plain /help", arguments: [CommandName.ready, .buffering, .ended, .time, .player])
    func playersReportsApart(_ name: CommandName) {
        let usage = CommandTable.spec(name).usage
        #expect(CommandReference.group(of: CommandTable.spec(name)) == .players)
        #expect(!CommandReference.helpLines().contains { $0.hasPrefix(usage + " ") })
        #expect(CommandReference.playerHelpLines().contains { $0.hasPrefix(usage + " ") })
    }

    @Test("every command for player connections is listed by /help players, and every other command by /help")
    func everyCommandListedOnce() {
        let plain = CommandReference.helpLines(), players = CommandReference.playerHelpLines()
        for spec in CommandTable.specs {
            let inPlain = plain.contains { $0.hasPrefix(spec.usage + " ") }
            let inPlayers = players.contains { $0.hasPrefix(spec.usage + " ") }
            #expect(inPlain != inPlayers, "\(spec.usage)")
            if spec.audience == .players { #expect(inPlayers, "\(spec.usage)") }
        }
    }

    @Test("people's commands sit under the heading their audience says")
    func headings() {
        #expect(CommandReference.group(of: CommandTable.spec(.watch)) == .watching)
        #expect(CommandReference.group(of: CommandTable.spec(.join)) == .watching)
        #expect(CommandReference.group(of: CommandTable.spec(.kick)) == .hosts)
        #expect(CommandReference.group(of: CommandTable.spec(.who)) == .room)
        #expect(CommandReference.group(of: CommandTable.spec(.help)) == .room)
    }

    @Test("/help <command> gives the usage, the summary and who may use it", arguments: CommandName.allCases)
    func helpForOneCommand(_ name: CommandName) {
        let spec = CommandTable.spec(name)
        let lines = CommandReference.helpLines(for: name)
        #expect(lines.contains("usage: \(spec.usage)"))
        #expect(lines.contains(spec.summary))
        #expect(lines.contains { $0.contains(spec.audience.rawValue) })
    }

    @Test("the Markdown reference has one row per command, with | escaped in usages")
    func markdownRows() {
        let markdown = CommandReference.markdown()
        let rows = markdown.split(separator: "\n").filter { $0.hasPrefix("| `/") }
        #expect(rows.count == CommandName.allCases.count)
        for spec in CommandTable.specs {
            let usage = spec.usage.split(separator: "|", omittingEmptySubsequences: false).joined(separator: "\\|")
            #expect(markdown.contains("| `\(usage)` | \(spec.summary) |"), "\(spec.usage)")
        }
        #expect(markdown.contains("`/autoplay on\\|off`"))
        #expect(markdown.hasSuffix("\n"))
    }

    /// `docs/commands.md` from the repository root, two levels above this file's folder.
    static let commandsFile = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent()
        .appendingPathComponent("../../docs/commands.md")
        .standardizedFileURL

    @Test("docs/commands.md is exactly what the command table generates")
    func docsDoNotDrift() throws {
        let path = Self.commandsFile.path
        guard FileManager.default.fileExists(atPath: path) else {
            Issue.record("docs/commands.md is missing at \(path): run commands/docs")
            return
        }
        let onDisk = try String(contentsOfFile: path, encoding: .utf8)
        #expect(onDisk == CommandReference.markdown(),
                "docs/commands.md differs from the command table: run commands/docs")
    }
}

@Suite("Media time, numbers and time arguments")
struct ValueFormattingTests {
    @Test("clockText is h:mm:ss, as in the contract's examples", arguments: [
        (0.0, "0:00:00"), (5, "0:00:05"), (5.999, "0:00:05"), (59.9, "0:00:59"), (60, "0:01:00"), (65, "0:01:05"),
        (723, "0:12:03"), (3599.99, "0:59:59"), (3600, "1:00:00"), (3605, "1:00:05"), (3695, "1:01:35"),
        (36_000, "10:00:00"), (999_999, "277:46:39"), (-5, "0:00:00"), (.nan, "0:00:00"), (.infinity, "0:00:00"),
    ])
    func clockText(seconds: Double, expected: String) {
        #expect(MediaTime(seconds: seconds).clockText == expected)
        #expect(MediaTime(seconds: seconds).description == expected)
    }

    @Test("a media time is never negative and never non-finite", arguments: [-1.0, -.infinity, .infinity, .nan, -0.0])
    func mediaTimeClamps(seconds: Double) {
        #expect(MediaTime(seconds: seconds).seconds == 0)
        #expect(MediaTime(seconds: 10).offset(by: -20) == .zero)
    }

    @Test("milliseconds round to the nearest millisecond", arguments: [
        (1.0, Int64(1000)), (1.2346, 1235), (0.0004, 0), (723.25, 723_250), (999_999, 999_999_000),
    ])
    func milliseconds(seconds: Double, expected: Int64) {
        #expect(MediaTime(seconds: seconds).milliseconds == expected)
    }

    @Test("NumberText.decimal rounds, drops trailing zeros and prints non-finite values as 0", arguments: [
        (1.0, 3, "1"), (1.5, 3, "1.5"), (12.345, 3, "12.345"), (0.25, 3, "0.25"), (0.1, 3, "0.1"),
        (1.05, 2, "1.05"), (0.001, 3, "0.001"), (0.0004, 3, "0"), (1.0005, 0, "1"), (2.5, 1, "2.5"),
        (5.0, 1, "5"), (2.25, 1, "2.3"), (-1.5, 3, "-1.5"), (-12.25, 3, "-12.25"), (-0.0004, 3, "0"),
        (-0.0, 3, "0"), (0, 0, "0"), (1_700_000_000_000, 3, "1700000000000"),
        (1_700_000_000_000.5, 3, "1700000000000.5"), (1.23456789, 6, "1.234568"), (1.23456789, 9, "1.234568"),
        (1.5, -1, "2"), (.nan, 3, "0"), (.infinity, 3, "0"), (-.infinity, 3, "0"),
    ])
    func decimal(value: Double, places: Int, expected: String) {
        #expect(NumberText.decimal(value, places: places) == expected)
    }

    @Test("NumberText.decimal gives a number JSON and people can read for any finite value", arguments: [
        1e15, 9.0e15, 1e16, -1e16, 9.2e18, 1e19, -1e19, 1e300, Double.greatestFiniteMagnitude,
    ])
    func decimalOfHugeValues(value: Double) async {
        // A trap would take the whole test run down, so the value is printed in its own process.
        await #expect(processExitsWith: .success, "NumberText.decimal(\(value), places: 3) traps") { [value] in
            let text = NumberText.decimal(value, places: 3)
            precondition(!text.isEmpty && Double(text) != nil)
        }
    }

    @Test("PlaybackRate prints without trailing zeros and clamps out-of-range values", arguments: [
        (1.0, "1"), (1.5, "1.5"), (0.25, "0.25"), (4, "4"),
    ])
    func rateDescription(value: Double, expected: String) throws {
        #expect(try #require(PlaybackRate(value)).description == expected)
        #expect(PlaybackRate(clamping: value).description == expected)
    }

    @Test("PlaybackRate refuses values outside 0.25...4 and clamps them when asked")
    func rateBounds() {
        #expect(PlaybackRate(0.24) == nil)
        #expect(PlaybackRate(4.01) == nil)
        #expect(PlaybackRate(.nan) == nil)
        #expect(PlaybackRate(.infinity) == nil)
        #expect(PlaybackRate(clamping: 10).value == 4)
        #expect(PlaybackRate(clamping: 0).value == 0.25)
        #expect(PlaybackRate(clamping: .nan).value == 1)
    }

    @Test("a time argument resolves against the group's position; relative never goes below 0", arguments: [
        (TimeArgument.absolute(MediaTime(seconds: 95)), 500.0, 95.0),
        (.absolute(MediaTime(seconds: 0)), 500, 0),
        (.relative(10), 95, 105),
        (.relative(-10), 95, 85),
        (.relative(-10), 5, 0),
        (.relative(-999_999), 0, 0),
        (.relative(-90), 90, 0),
        (.relative(0.5), 0, 0.5),
        (.relative(999_999), 999_999, 1_999_998),
    ])
    func resolved(argument: TimeArgument, current: Double, expected: Double) {
        #expect(argument.resolved(from: MediaTime(seconds: current)).seconds == expected)
    }

    @Test("times typed in a command resolve as the contract says")
    func parsedTimesResolve() throws {
        let parser = LineParser()
        func target(_ line: String, from current: Double) throws -> Double {
            guard case .success(.command(.seek(let time))) = parser.parse(line) else {
                throw ArgumentProblem("\(line) did not parse")
            }
            return time.resolved(from: MediaTime(seconds: current)).seconds
        }
        #expect(try target("/seek +10", from: 95) == 105)
        #expect(try target("/seek -10", from: 95) == 85)
        #expect(try target("/seek -1:30", from: 60) == 0)
        #expect(try target("/seek 1:01:35", from: 5) == 3695)
    }
}
