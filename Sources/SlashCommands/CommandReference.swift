/// The human forms of the command table: `/help` text and `docs/commands.md`.
public enum CommandReference {
    /// The headings `/help` sorts commands under. Players' and bots' reports
    /// (`/ready <seq>`, `/buffering`...) are for programs, so plain `/help` leaves
    /// them out and `/help players` lists them.
    public enum Group: String, CaseIterable, Sendable {
        case room = "In the room"
        case watching = "Watching together"
        case hosts = "For hosts"
        case players = "What players and bots send"
    }

    /// Derived from who may use a command, so that a command added to the table
    /// lands under a heading without being named here: players' reports are the
    /// commands for player connections, with `/player` (which makes one) and
    /// `/time` (the clock sync players run).
    public static func group(of spec: CommandSpec) -> Group {
        switch spec.audience {
        case .players: return .players
        case .hosts: return .hosts
        case .controllers, .sessionMembers: return .watching
        case .anyone:
            switch spec.name {
            case .player, .time: return .players
            case .join, .autoplay: return .watching
            default: return .room
            }
        }
    }

    /// People's commands under their headings, one line each:
    /// `/seek <time> - Move everyone to a time ...` (the page sets usages apart by that form).
    public static func helpLines() -> [String] {
        var lines = ["Commands (/help <command> explains one; /help players lists what players and bots send):"]
        for group in Group.allCases where group != .players {
            lines.append("\(group.rawValue):")
            lines += CommandTable.specs.filter { self.group(of: $0) == group }.map { "\($0.usage) - \($0.summary)" }
        }
        return lines + ["To leave: close the page, or Ctrl-D (or /quit) in cowatch connect."]
    }

    /// `/help players`: the reports a player or bot sends, which people never type.
    public static func playerHelpLines() -> [String] {
        ["\(Group.players.rawValue) (the room page sends these by itself, as any program that plays the video does: docs/protocol.md):"]
            + CommandTable.specs.filter { group(of: $0) == .players }.map { "\($0.usage) - \($0.summary)" }
    }

    /// Usage, summary and audience of one command.
    public static func helpLines(for name: CommandName) -> [String] {
        let spec = CommandTable.spec(name)
        return ["usage: \(spec.usage)", spec.summary, "who: \(spec.audience.rawValue)"]
    }

    /// The Markdown page kept as `docs/commands.md`.
    public static func markdown() -> String {
        var text = """
        # Commands

        Generated from the command table (`Sources/SlashCommands/CommandTable.swift`) by
        `commands/docs`; a test fails when this file and the table differ.

        A line starting with `/` is a command; `//x` is the chat text `/x`; any other
        non-empty line is chat. Times accept `95`, `95.5`, `1:35`, `1:01:35`, and
        relative `+10`, `-10` from the group's current position. `/help` lists people's
        commands; the reports players and bots send (`/player`, `/ready`, `/buffering`,
        `/ended`, `/time` and the like) are listed by `/help players`.

        | command | what it does | who may use it |
        |---|---|---|

        """
        for spec in CommandTable.specs {
            let usage = spec.usage.replacingOccurrences(of: "|", with: "\\|")
            text += "| `\(usage)` | \(spec.summary) | \(spec.audience.rawValue) |\n"
        }
        return text
    }
}

extension String {
    fileprivate func replacingOccurrences(of target: String, with replacement: String) -> String {
        split(separator: Character(target), omittingEmptySubsequences: false).joined(separator: replacement)
    }
}
