import Foundation

/// mpv's JSON IPC (`--input-ipc-server`): one JSON object a line each way.
/// Commands are `{"command": [name, args...], "request_id": N}`; mpv answers
/// `{"request_id": N, "error": "success", "data": ...}`, and sends events
/// (`{"event": "seek"}`, `{"event": "property-change", "id": 1, "name": "pause",
/// "data": true}`, `{"event": "end-file", "reason": "eof"}`...) in between.
public enum MpvValue: Sendable, Hashable {
    case number(Double)
    case bool(Bool)
    case string(String)
    case null
    /// An object or array: the player reads none.
    case other

    init(_ any: Any?) {
        guard let any, !(any is NSNull) else { self = .null; return }
        if let text = any as? String { self = .string(text); return }
        guard let number = any as? NSNumber else { self = .other; return }
        // JSON's true and false come as NSNumber too: told apart by their type.
        let kind = String(cString: number.objCType)
        self = kind == "c" || kind == "B" ? .bool(number.boolValue) : .number(number.doubleValue)
    }

    public var double: Double? { if case .number(let value) = self { value } else { nil } }
    public var bool: Bool? { if case .bool(let value) = self { value } else { nil } }
}

public enum MpvMessage: Sendable, Hashable {
    case reply(id: Int, success: Bool, error: String, data: MpvValue)
    case propertyChange(name: String, data: MpvValue)
    /// Any other event, with `end-file`'s `reason` when it has one.
    case event(String, reason: String?)

    /// One line from mpv; nil when it is none of these.
    public init?(line: String) {
        guard let data = line.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else { return nil }
        if let event = object["event"] as? String {
            if event == "property-change", let name = object["name"] as? String {
                self = .propertyChange(name: name, data: MpvValue(object["data"]))
            } else {
                self = .event(event, reason: object["reason"] as? String)
            }
            return
        }
        guard let id = (object["request_id"] as? NSNumber)?.intValue else { return nil }
        let error = object["error"] as? String ?? ""
        self = .reply(id: id, success: error == "success", error: error, data: MpvValue(object["data"]))
    }

    /// A command's line (with its newline).
    public static func command(_ arguments: [MpvValue], id: Int) -> String {
        let values: [Any] = arguments.map { value -> Any in
            switch value {
            case .number(let number): number
            case .bool(let flag): flag
            case .string(let text): text
            case .null, .other: NSNull()
            }
        }
        let object: [String: Any] = ["command": values, "request_id": id]
        guard let data = try? JSONSerialization.data(withJSONObject: object),
              let text = String(data: data, encoding: .utf8) else { return "" }
        return text + "\n"
    }
}

/// Commands read as mpv's own: `["seek", .number(12.5), "absolute+exact"]`.
extension MpvValue: ExpressibleByStringLiteral, ExpressibleByBooleanLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
    public init(booleanLiteral value: Bool) { self = .bool(value) }
}
