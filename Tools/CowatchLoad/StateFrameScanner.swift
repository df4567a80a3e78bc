import CowatchClient

/// Reads just enough of a server frame for the load generator: whether it is a
/// `state` and its `seq`, or an `error`. A byte scan rather than a JSON decode,
/// because the generator shares the machine with the server it measures and
/// sees every frame of every member: measured with `--frame-reading decode`, a
/// `JSONDecoder` doubles the generator's cost per delivery (12 to 23 µs) and
/// halves the throughput it can measure (docs/benchmarks.md, "Reading frames in
/// the load generator").
enum StateFrameScanner {
    /// The `seq` of a `state` event, or nil for any other frame. In the text
    /// encoding, where states carry no number, every state line counts as 0.
    static func stateSeq(_ text: String, encoding: ClientEncoding) -> Int? {
        var text = text
        return text.withUTF8 { bytes -> Int? in
            switch encoding {
            case .json: return jsonStateSeq(bytes)
            case .text: return textIsState(bytes) ? 0 : nil
            }
        }
    }

    /// Whether the frame is an `error` event (JSON) or an error line (text, `! ...`).
    static func isError(_ text: String, encoding: ClientEncoding) -> Bool {
        var text = text
        return text.withUTF8 { bytes -> Bool in
            switch encoding {
            case .json: return find(typeError, in: bytes, from: 0) != nil
            case .text: return bytes.count >= 2 && bytes[0] == UInt8(ascii: "!") && bytes[1] == UInt8(ascii: " ")
            }
        }
    }

    /// Whether a state frame (JSON) holds the group `waiting` for its players.
    static func isWaiting(_ text: String) -> Bool {
        var text = text
        return text.withUTF8 { find(statusWaiting, in: $0, from: 0) != nil }
    }

    private static let typeState = Array(#""type":"state""#.utf8)
    private static let statusWaiting = Array(#""status":"waiting""#.utf8)
    private static let typeError = Array(#""type":"error""#.utf8)
    private static let seqKey = Array(#""seq":"#.utf8)
    private static let timeLine = Array("= time ".utf8)

    /// The server writes `type` first and `seq` right after it; other layouts are
    /// found by a scan.
    static func jsonStateSeq(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let typeAt = find(typeState, in: bytes, from: 0) else { return nil }
        let afterType = typeAt + typeState.count
        guard let seqAt = find(seqKey, in: bytes, from: afterType) ?? find(seqKey, in: bytes, from: 0) else { return nil }
        var index = seqAt + seqKey.count
        var value = 0, digits = 0
        while index < bytes.count, bytes[index] >= 0x30, bytes[index] <= 0x39, digits < 18 {
            value = value * 10 + Int(bytes[index] - 0x30)
            index += 1
            digits += 1
        }
        return digits > 0 ? value : nil
    }

    /// `= paused ...`, `= playing ...`, `= waiting ...`, `= nothing is playing ...`,
    /// `= the session ended ...`; not the `= time ...` answer (the bench sends no
    /// informational commands, so no other `= ` line arrives).
    static func textIsState(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.count >= 2, bytes[0] == UInt8(ascii: "="), bytes[1] == UInt8(ascii: " ") else { return false }
        if bytes.count >= timeLine.count && zip(timeLine, bytes).allSatisfy({ $0 == $1 }) { return false }
        return true
    }

    private static func find(_ needle: [UInt8], in bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Int? {
        guard let first = needle.first, bytes.count >= needle.count else { return nil }
        var index = start
        let last = bytes.count - needle.count
        while index <= last {
            if bytes[index] == first {
                var match = true
                for offset in 1..<needle.count where bytes[index + offset] != needle[offset] {
                    match = false
                    break
                }
                if match { return index }
            }
            index += 1
        }
        return nil
    }
}
