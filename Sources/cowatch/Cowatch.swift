import CowatchCore
import ArgumentParser

@main
struct Cowatch: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "cowatch",
        abstract: "Watch videos together, in sync: a server, a terminal client and tools.",
        version: CowatchVersion.current,
        subcommands: [ServeCommand.self, ConnectCommand.self, WatchCommand.self, BridgeCommand.self, CommandsCommand.self, BenchCommand.self, AdminCommand.self, TokenCommand.self]
    )
}
