/// One row of the command table: everything the parser, `/help` and
/// `docs/commands.md` know about a command comes from here.
public struct CommandSpec: Sendable {
    public let name: CommandName
    /// The arguments as shown in usage lines: `<time>`, `[reason] [at <time>]`.
    public let arguments: String
    /// One sentence saying what the command does.
    public let summary: String
    /// Who may use it, shown by `/help <command>`.
    public let audience: Audience
    let parse: @Sendable (inout ArgumentReader) throws(ArgumentProblem) -> SlashCommand

    public enum Audience: String, Sendable {
        case anyone = "anyone"
        case controllers = "session members (hosts only, under /policy control hosts)"
        case hosts = "hosts"
        case players = "player connections"
        case sessionMembers = "session members"
    }

    /// `/seek <time>`
    public var usage: String {
        arguments.isEmpty ? "/\(name.rawValue)" : "/\(name.rawValue) \(arguments)"
    }
}

/// What is wrong with a command's arguments, before the usage is attached.
public struct ArgumentProblem: Error, Hashable, Sendable {
    public let reason: String
    public init(_ reason: String) { self.reason = reason }
}
