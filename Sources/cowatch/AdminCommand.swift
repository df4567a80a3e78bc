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
        --token-file (or COWATCH_ADMIN_TOKEN). --server is the server's own port over
        plain HTTP (run it on the server machine, or through an SSH tunnel), or an
        https:// address where a proxy passes /admin/ on. Answers are printed as
        lines to read (--json: as the server sent them). In a cluster, bans and
        creation tokens are the cluster's; a drain is the node's (docs/cluster.md).

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

    @Option(help: "The server's address: http://HOST:PORT (its own port) or https://HOST.")
    var server = "http://127.0.0.1:7480"

    @Option(help: ArgumentHelp("With an https:// server: a PEM file of CA certificates to trust besides the system's.", valueName: "file"))
    var caFile: String?

    @Flag(help: "Print the server's JSON answer as it is.")
    var json = false

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
        guard let base = WebSocketAddress(server), server.lowercased().hasPrefix("http") else {
            throw ValidationError("--server is http://HOST:PORT (the server's own port) or https://HOST, not \(server)")
        }
        var address = base
        address.path = path
        let token: String?
        if let tokenFile {
            token = try String(contentsOfFile: tokenFile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        } else {
            token = ProcessInfo.processInfo.environment["COWATCH_ADMIN_TOKEN"]
        }
        guard let token, !token.isEmpty else {
            Output.error("cowatch admin: the admin API needs the operator's token: --token-file FILE (the server's "
                         + "admin-token-file) or the COWATCH_ADMIN_TOKEN environment variable")
            throw ExitCode(2)
        }
        let answer: (status: Int, body: String)
        do {
            answer = try PlainHTTP.request(method, address, bearer: token, trust: ClientTrust(caFile: caFile))
        } catch {
            Output.error("cowatch admin: \(error)")
            throw ExitCode(1)
        }
        let object = (try? JSONSerialization.jsonObject(with: Data(answer.body.utf8))) as? [String: Any]
        guard let object else {
            // Not the admin API's JSON: a proxy's page, or another server.
            Output.error("cowatch admin: \(address.authority) answered \(answer.status) with something other than Cowatch's admin API "
                         + "(is --server the Cowatch server's own port, or a proxy that passes /admin/ on?)")
            throw ExitCode(1)
        }
        if json {
            print(answer.body, terminator: answer.body.hasSuffix("\n") ? "" : "\n")
        }
        guard (200..<300).contains(answer.status) else {
            Output.error("cowatch admin: the server answered \(answer.status): \(object["error"] as? String ?? answer.body)")
            throw ExitCode(1)
        }
        if !json { print(AdminText.lines(action, object).joined(separator: "\n")) }
    }
}

/// The admin API's answers as lines for a person: one room or ban a line,
/// instants as UTC dates.
enum AdminText {
    static func lines(_ action: String, _ answer: [String: Any]) -> [String] {
        var lines: [String] = []
        if let node = answer["node"] as? String { lines.append("node \(node)") }
        switch action {
        case "rooms":
            let rooms = answer["rooms"] as? [[String: Any]] ?? []
            let elsewhere = answer["elsewhere"] as? [[String: Any]] ?? []
            if rooms.isEmpty && elsewhere.isEmpty { lines.append("no rooms") }
            for room in rooms { lines.append(describeRoom(room)) }
            for room in elsewhere {
                lines.append("\(room["name"] as? String ?? "?")  on node \(room["node"] as? String ?? "?") (ask it for more)")
            }
        case "bans":
            let bans = answer["bans"] as? [[String: Any]] ?? []
            if bans.isEmpty { lines.append("no bans") }
            for ban in bans {
                let until = (ban["until"] as? NSNumber).map { "until \(date($0.int64Value))" } ?? "until lifted"
                lines.append("\(ban["address"] as? String ?? "?")  \(until)")
            }
        default:
            for (key, value) in answer.sorted(by: { $0.key < $1.key }) where key != "node" {
                lines.append("\(key): \(value)")
            }
        }
        return lines
    }

    static func describeRoom(_ room: [String: Any]) -> String {
        var parts = ["\(room["name"] as? String ?? "?")",
                     "\(room["connected"] ?? 0)/\(room["members"] ?? 0) connected", "\(room["status"] ?? "?")"]
        if let title = room["title"] as? String { parts.append("\"\(title)\"") }
        if room["locked"] as? Bool == true { parts.append("locked") }
        if room["owned"] as? Bool == false { parts.append("no owner") }
        if let bans = room["bans"] as? Int, bans > 0 { parts.append("\(bans) bans") }
        if let empty = room["emptySince"] as? NSNumber { parts.append("empty since \(date(empty.int64Value))") }
        return parts.joined(separator: "  ")
    }

    /// Epoch milliseconds as `2026-12-06 15:04 UTC`.
    static func date(_ milliseconds: Int64) -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute],
                                            from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
        func two(_ value: Int?) -> String { String(format: "%02d", value ?? 0) }
        return "\(parts.year ?? 0)-\(two(parts.month))-\(two(parts.day)) \(two(parts.hour)):\(two(parts.minute)) UTC"
    }
}