import ArgumentParser
import CowatchClient
import Foundation

/// `cowatch admin`: the operator's controls, over the server's admin API
/// (docs/security.md, "The operator's controls").
struct AdminCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin",
        abstract: "The operator's controls over a running server's admin API.",
        discussion: """
        The server must run with --admin-token-file; give the same token here with
        --token-file (or COWATCH_ADMIN_TOKEN). Talks plain HTTP to the server's port:
        run it on the server machine, or through an SSH tunnel.

          cowatch admin rooms
          cowatch admin close movie-night
          cowatch admin ban 203.0.113.9 [--minutes 60]
          cowatch admin unban 203.0.113.9
          cowatch admin bans
          cowatch admin drain on|off
          cowatch admin token movie-night dj-bot --scope control
          cowatch admin revoke-token movie-night 3
          cowatch admin creation-token [--uses 5]
        """
    )

    @Option(help: "The server's address.")
    var server = "http://127.0.0.1:7480"

    @Option(help: "A file holding the admin token (default: the COWATCH_ADMIN_TOKEN environment variable).")
    var tokenFile: String?

    @Option(help: "With ban: minutes until the ban lifts itself (default: until unban).")
    var minutes: Double?

    @Option(help: "With token: read, chat or control.")
    var scope = "chat"

    @Option(help: "With creation-token: how many rooms it may create.")
    var uses = 1

    @Argument(help: "rooms, close, ban, unban, bans, drain, token, revoke-token or creation-token, and their arguments.")
    var words: [String]

    func run() throws {
        guard let action = words.first else { throw ValidationError("say what: rooms, close, ban, unban, bans, drain, token, revoke-token, creation-token") }
        let rest = Array(words.dropFirst())
        func arg(_ index: Int, _ what: String) throws -> String {
            guard index < rest.count else { throw ValidationError("\(action) needs \(what)") }
            return rest[index]
        }
        func query(_ text: String) -> String {
            text.addingPercentEncoding(withAllowedCharacters: .urlQueryAllowed.subtracting(CharacterSet(charactersIn: "&=+"))) ?? text
        }
        let (method, path): (String, String)
        switch action {
        case "rooms": (method, path) = ("GET", "/admin/rooms")
        case "close": (method, path) = ("POST", "/admin/rooms/\(query(try arg(0, "a room name")))/close")
        case "ban":
            (method, path) = ("POST", "/admin/bans?address=\(query(try arg(0, "an address")))" + (minutes.map { "&minutes=\($0)" } ?? ""))
        case "unban": (method, path) = ("POST", "/admin/bans/lift?address=\(query(try arg(0, "an address")))")
        case "bans": (method, path) = ("GET", "/admin/bans")
        case "drain":
            let on = try arg(0, "on or off")
            guard on == "on" || on == "off" else { throw ValidationError("drain on or drain off") }
            (method, path) = ("POST", "/admin/drain?on=\(on)")
        case "token":
            (method, path) = ("POST", "/admin/rooms/\(query(try arg(0, "a room name")))/tokens?name=\(query(try arg(1, "a bot name")))&scope=\(query(scope))")
        case "revoke-token":
            (method, path) = ("POST", "/admin/rooms/\(query(try arg(0, "a room name")))/revoke-token?number=\(query(try arg(1, "the token's number")))")
        case "creation-token": (method, path) = ("POST", "/admin/creation-tokens?uses=\(uses)")
        default: throw ValidationError("unknown action \(action): rooms, close, ban, unban, bans, drain, token, revoke-token, creation-token")
        }
        guard let base = WebSocketAddress(server), let address = WebSocketAddress("http://\(base.host):\(base.port)\(path)") else {
            throw ValidationError("--server is http://HOST:PORT")
        }
        let token: String?
        if let tokenFile {
            token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            token = ProcessInfo.processInfo.environment["COWATCH_ADMIN_TOKEN"]
        }
        let (status, body) = try PlainHTTP.request(method, address, bearer: token)
        print(body, terminator: body.hasSuffix("\n") ? "" : "\n")
        guard (200..<300).contains(status) else {
            FileHandle.standardError.write(Data("cowatch admin: the server answered \(status)\n".utf8))
            throw ExitCode(1)
        }
    }
}
