import ArgumentParser
import SlashCommands

/// `cowatch commands`: the slash-command reference, from the same table the
/// server parses with, so what it prints is what the server accepts.
struct CommandsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "commands",
        abstract: "Print the slash commands a room accepts."
    )

    @Flag(help: "Print the Markdown page kept as docs/commands.md.")
    var markdown = false

    func run() {
        if markdown {
            print(CommandReference.markdown(), terminator: "")
        } else {
            CommandReference.helpLines().forEach { print($0) }
        }
    }
}
