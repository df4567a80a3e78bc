import ArgumentParser
import CowatchClient
import Foundation

/// `cowatch token create`: a bot token issued by the operator, through the admin
/// API (the same request as `cowatch admin token`).
struct TokenCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "token",
        abstract: "Bot tokens issued by the server's operator.",
        subcommands: [Create.self]
    )

    struct Create: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Make a bot token for a room: its connections (token= or Authorization: Bearer) come in under --name with --scope.")

        @Option(help: "The room.")
        var room: String

        @Option(help: "read, chat or control.")
        var scope = "chat"

        @Option(help: "The name the bot's connections take.")
        var name = "bot"

        @Option(help: "The server's address.")
        var server = "http://127.0.0.1:7480"

        @Option(help: "A file holding the admin token (default: the COWATCH_ADMIN_TOKEN environment variable).")
        var tokenFile: String?

        func run() throws {
            let admin = try AdminCommand.parse(["--server", server, "--scope", scope, "--json", "token", room, name]
                + (tokenFile.map { ["--token-file", $0] } ?? []))
            try admin.run()
        }
    }
}
