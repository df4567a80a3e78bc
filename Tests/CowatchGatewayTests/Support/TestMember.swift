import CowatchClient
import Foundation

/// A connected client that records every frame it receives, for tests to wait
/// on. Frames are consumed in order: `next` returns the first unread frame that
/// matches and moves past it.
final class TestMember: @unchecked Sendable {
    let name: String
    let encoding: ClientEncoding
    var connection: ClientConnection?
    private let condition = NSCondition()
    private var frames: [String] = []
    private var cursor = 0
    private var closed: CloseInfo?

    init(name: String, encoding: ClientEncoding) {
        self.name = name
        self.encoding = encoding
    }

    var handlers: ClientHandlers {
        ClientHandlers(
            // Weak: the connection keeps its handlers, and the member its connection.
            received: { [weak self] text in
                guard let self else { return }
                condition.lock()
                frames.append(text)
                condition.broadcast()
                condition.unlock()
            },
            closed: { [weak self] info in
                guard let self else { return }
                condition.lock()
                closed = info
                condition.broadcast()
                condition.unlock()
            })
    }

    var closeInfo: CloseInfo? {
        condition.lock()
        defer { condition.unlock() }
        return closed
    }

    var allFrames: [String] {
        condition.lock()
        defer { condition.unlock() }
        return frames
    }

    func send(_ text: String) {
        connection?.send(text)
    }

    func sendBytes(_ bytes: [UInt8], binary: Bool) {
        connection?.send(bytes: bytes, binary: binary)
    }

    /// Closes with 1000: the member leaves for good.
    func close() {
        connection?.close()
    }

    /// Closes with 1001, as a browser tab that closes or reloads: the member keeps
    /// its resume grace.
    func goAway() {
        connection?.close(code: 1001)
    }

    /// The first unread frame matching `predicate`, waiting up to `timeout` seconds.
    func next(timeout: Double = 5, where predicate: (String) -> Bool) -> String? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            while cursor < frames.count {
                let frame = frames[cursor]
                cursor += 1
                if predicate(frame) { return frame }
            }
            if closed != nil || !condition.wait(until: deadline) { return nil }
        }
    }

    /// The next JSON event of `type` whose fields satisfy `predicate`.
    func event(_ type: String, timeout: Double = 5, where predicate: (JSONObject) -> Bool = { _ in true }) -> JSONObject? {
        var found: JSONObject?
        _ = next(timeout: timeout) { frame in
            guard let object = JSONObject(frame), object.string("type") == type, predicate(object) else { return false }
            found = object
            return true
        }
        return found
    }

    /// The next `state` event whose playback status is `status`.
    func state(_ status: String, timeout: Double = 5) -> JSONObject? {
        event("state", timeout: timeout) { $0.object("playback")?.string("status") == status }
    }

    /// The next `error` event, if any arrives in time.
    func error(timeout: Double = 5) -> JSONObject? {
        event("error", timeout: timeout)
    }

    /// Every unread JSON event up to the answer to a `/time` round trip, which is
    /// consumed: what this member's earlier lines caused, and what the room did
    /// before the server read this line, arrives before that answer (the server
    /// reads a connection's lines in order and queues its events in order). How a
    /// test shows that something did not happen, without waiting on a guess:
    /// `#expect(!alice.untilRoundTrip().contains { ... })`. Nil when the answer
    /// does not come.
    func untilRoundTrip(timeout: Double = 5) -> [JSONObject]? {
        let marker = "\(Self.nextMarker())"
        send("/time \(marker)")
        var seen: [JSONObject] = []
        let answer = next(timeout: timeout) { frame in
            guard let object = JSONObject(frame) else { return false }
            if object.string("type") == "time", object.number("client").map({ String(format: "%.0f", $0) }) == marker { return true }
            seen.append(object)
            return false
        }
        return answer == nil ? nil : seen
    }

    private static let markers = NSLock()
    nonisolated(unsafe) private static var lastMarker = 900_000_000

    private static func nextMarker() -> Int {
        markers.withLock {
            lastMarker += 1
            return lastMarker
        }
    }

    /// Waits until the server closes the connection; nil if it stays open.
    func waitClosed(timeout: Double = 5) -> CloseInfo? {
        let deadline = Date().addingTimeInterval(timeout)
        condition.lock()
        defer { condition.unlock() }
        while closed == nil {
            if !condition.wait(until: deadline) { break }
        }
        return closed
    }
}

/// A JSON object from an event frame, with typed accessors.
struct JSONObject: @unchecked Sendable {
    let fields: [String: Any]

    init?(_ text: String) {
        guard let data = text.data(using: .utf8),
              let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
        else { return nil }
        fields = object
    }

    init(fields: [String: Any]) { self.fields = fields }

    func string(_ key: String) -> String? { fields[key] as? String }
    func number(_ key: String) -> Double? { (fields[key] as? NSNumber)?.doubleValue }
    func int(_ key: String) -> Int64? { (fields[key] as? NSNumber)?.int64Value }
    func bool(_ key: String) -> Bool? { (fields[key] as? NSNumber)?.boolValue }
    func object(_ key: String) -> JSONObject? { (fields[key] as? [String: Any]).map(JSONObject.init(fields:)) }
    func array(_ key: String) -> [JSONObject]? { (fields[key] as? [[String: Any]])?.map(JSONObject.init(fields:)) }
    func strings(_ key: String) -> [String]? { fields[key] as? [String] }
    func isNull(_ key: String) -> Bool { fields[key] is NSNull }
}
