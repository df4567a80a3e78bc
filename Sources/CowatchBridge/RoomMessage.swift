import Foundation

/// The events of a room (`cowatch.v1.json`, docs/protocol.md) that the bridge
/// acts on, read from their JSON; anything else is `.other`.
public enum RoomMessage: Hashable, Sendable {
    /// `ownerKey` only when this connection created the room.
    case welcome(you: String, name: String, resume: String, ownerKey: String?)
    case chat(from: String, name: String, text: String, me: Bool)
    case notice(text: String, cause: String?)
    case error(code: String, message: String, command: String?)
    /// The answer to an informational command, for its sender: the words a
    /// text client sees (several lines).
    case reply(command: String, text: String)
    /// What plays now: the activity's title and link, and the playback status.
    case state(title: String?, url: String?, status: String)
    case other(type: String)

    public static func parse(_ text: String) -> RoomMessage? {
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any],
              let type = object["type"] as? String else { return nil }
        func string(_ key: String) -> String? { object[key] as? String }
        switch type {
        case "welcome":
            guard let you = object["you"] as? [String: Any], let id = you["id"] as? String,
                  let name = you["name"] as? String else { return nil }
            return .welcome(you: id, name: name, resume: string("resume") ?? "", ownerKey: string("ownerKey"))
        case "chat":
            guard let from = string("from"), let name = string("name"), let said = string("text") else { return nil }
            return .chat(from: from, name: name, text: said, me: object["me"] as? Bool ?? false)
        case "notice":
            guard let said = string("text") else { return nil }
            return .notice(text: said, cause: string("cause"))
        case "error":
            guard let code = string("code"), let message = string("message") else { return nil }
            return .error(code: code, message: message, command: string("command"))
        case "reply":
            guard let command = string("command"), let said = string("text") else { return nil }
            return .reply(command: command, text: said)
        case "state":
            let playback = object["playback"] as? [String: Any]
            let session = object["session"] as? [String: Any]
            let activity = session?["activity"] as? [String: Any]
            return .state(title: activity?["title"] as? String, url: activity?["url"] as? String,
                          status: playback?["status"] as? String ?? "idle")
        default:
            return .other(type: type)
        }
    }
}
