import Foundation

/// Janus's WebSocket API (the `janus-protocol` subprotocol), as much of it as
/// Cowatch speaks: a session, handles on the AudioBridge plugin, its requests,
/// and what Janus sends back. Janus is Cowatch's own process on loopback, and
/// every request carries its API secret (deploy/voice/janus.jcfg).
enum JanusWire {
    static let subprotocol = "janus-protocol"
    static let plugin = "janus.plugin.audiobridge"

    /// One request, as text.
    static func request(_ fields: [String: any Sendable]) -> String {
        guard JSONSerialization.isValidJSONObject(fields),
              let data = try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])
        else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }

    /// What Janus sent, read into the fields Cowatch uses; nil for a frame that is
    /// not a JSON object.
    static func message(_ text: String) -> JanusMessage? {
        guard let data = text.data(using: .utf8),
              let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
              let kind = object["janus"] as? String
        else { return nil }
        var message = JanusMessage(kind: kind)
        message.transaction = object["transaction"] as? String
        message.sender = integer(object["sender"])
        message.session = integer(object["session_id"])
        if let data = object["data"] as? [String: Any] { message.createdID = integer(data["id"]) }
        if let error = object["error"] as? [String: Any] {
            message.errorCode = integer(error["code"]).map(Int.init)
            message.errorReason = error["reason"] as? String
        }
        message.reason = object["reason"] as? String
        if let plugindata = object["plugindata"] as? [String: Any], let data = plugindata["data"] as? [String: Any] {
            var event = JanusMessage.AudioBridge(name: data["audiobridge"] as? String ?? "")
            event.room = integer(data["room"])
            event.participant = integer(data["id"])
            event.errorCode = integer(data["error_code"]).map(Int.init)
            event.error = data["error"] as? String
            if let list = data["list"] as? [[String: Any]] {
                event.rooms = list.compactMap { entry in
                    integer(entry["room"]).map { JanusMessage.ListedRoom(number: $0, description: entry["description"] as? String ?? "") }
                }
            }
            message.audioBridge = event
        }
        if let jsep = object["jsep"] as? [String: Any], jsep["type"] as? String == "answer" {
            message.answer = jsep["sdp"] as? String
        }
        return message
    }

    private static func integer(_ value: Any?) -> Int64? {
        switch value {
        case let number as NSNumber: Int64(exactly: number.doubleValue)
        default: nil
        }
    }
}

/// A message from Janus, reduced to what the bridge reads.
struct JanusMessage: Hashable, Sendable {
    /// `success`, `error`, `ack`, `event`, `hangup`, `webrtcup`, `media`,
    /// `detached`, `timeout`, `slowlink`...
    var kind: String
    var transaction: String?
    /// The handle an event is about.
    var sender: Int64?
    var session: Int64?
    /// A `create` or `attach` success: the new session's or handle's id.
    var createdID: Int64?
    var errorCode: Int?
    var errorReason: String?
    /// A `hangup`'s reason.
    var reason: String?
    var audioBridge: AudioBridge?
    /// The session description of a `jsep` answer.
    var answer: String?

    struct AudioBridge: Hashable, Sendable {
        /// `created`, `joined`, `talking`, `stopped-talking`, `event`, `success`...
        var name: String
        var room: Int64?
        var participant: Int64?
        var errorCode: Int?
        var error: String?
        /// A `list` answer's rooms.
        var rooms: [ListedRoom] = []
    }

    /// A room on Janus, as its `list` request names it.
    struct ListedRoom: Hashable, Sendable {
        var number: Int64
        var description: String
    }

    init(kind: String) { self.kind = kind }
}
