/// The human forms of the command table: `/help` text and `docs/commands.md`.
public enum CommandReference {
    /// One line per command: `/seek <time>  Move everyone to a time ...`.
    public static func helpLines() -> [String] {
        ["Commands (type /help <command> for one):"]
            + CommandTable.specs.map { "\($0.usage) - \($0.summary)" }
            + ["To leave: close the page, or Ctrl-D (or /quit) in cowatch connect."]
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
        relative `+10`, `-10` from the group's current position.

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
