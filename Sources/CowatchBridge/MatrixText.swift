import Foundation

/// What a Matrix message event says, as lines for the bridge, and how the
/// bridge's lines are written for Matrix clients.
enum MatrixText {
    struct Lines: Hashable {
        var lines: [String]
        /// `m.emote` (`/me`).
        var emote: Bool
    }

    /// The lines of a person's message; nil for what is not relayed: the bot's
    /// own, notices (bots never answer them), edits (the original was relayed),
    /// redacted messages, and anything but text and emotes.
    static func lines(of event: [String: Any], ownUser: String, members: [String: String?]) -> Lines? {
        guard event["type"] as? String == "m.room.message", let sender = event["sender"] as? String, sender != ownUser else { return nil }
        if let unsigned = event["unsigned"] as? [String: Any], unsigned["redacted_because"] != nil { return nil }
        let content = event["content"] as? [String: Any] ?? [:]
        let relation = content["m.relates_to"] as? [String: Any]
        if relation?["rel_type"] as? String == "m.replace" || content["m.new_content"] != nil { return nil }
        let msgtype = content["msgtype"] as? String
        guard msgtype == "m.text" || msgtype == "m.emote", var body = content["body"] as? String else { return nil }
        var addressee: String?
        if let reply = relation?["m.in_reply_to"] as? [String: Any], reply["event_id"] != nil {
            (body, addressee) = withoutReplyFallback(body)
        }
        var lines = body.split(whereSeparator: \.isNewline).map { String($0).trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        lines = lines.map { line in String(line.unicodeScalars.filter { $0.value >= 0x20 && $0.value != 0x7F }.map(Character.init)) }
        guard !lines.isEmpty else { return nil }
        // A reply names whom it answers, as people write it in a channel;
        // not before a command, which would stop being one.
        if let addressee, msgtype == "m.text", let first = lines.first?.unicodeScalars.first, first.properties.isAlphabetic || first.properties.numericType != nil {
            let name = MatrixSession.name(addressee, members[addressee] ?? nil)
            lines[0] = "\(name): \(lines[0])"
        }
        return Lines(lines: lines, emote: msgtype == "m.emote")
    }

    /// A reply's body starts with the quoted message (`> <@who:server> text`)
    /// and a blank line, for clients that do not show replies: removed, and
    /// the quoted person returned.
    static func withoutReplyFallback(_ body: String) -> (String, String?) {
        var lines = body.split(separator: "\n", omittingEmptySubsequences: false)
        guard lines.first?.hasPrefix("> ") == true else { return (body, nil) }
        var quoted: String?
        if let first = lines.first, first.hasPrefix("> <"), let end = first.dropFirst(3).firstIndex(of: ">") {
            quoted = String(first[first.index(first.startIndex, offsetBy: 3)..<end])
        }
        while let first = lines.first, first.hasPrefix(">") { lines.removeFirst() }
        if lines.first?.isEmpty == true { lines.removeFirst() }
        return (lines.joined(separator: "\n"), quoted)
    }

    /// A message's content; a line addressed to a member (`name: text`, as the
    /// bridge addresses answers) mentions them, so that their client tells them.
    /// `recent`: who last spoke under a name, which decides between people
    /// sharing a display name (the answer is for the one who just asked).
    static func content(_ text: String, notice: Bool, members: [String: String?], recent: [String: String] = [:]) -> String {
        var content: [String: Any] = ["msgtype": notice ? "m.notice" : "m.text", "body": text]
        if let colon = text.range(of: ": ") {
            let name = String(text[..<colon.lowerBound])
            let matching = members.keys.filter { MatrixSession.name($0, members[$0] ?? nil) == name }
            if let user = recent[name].flatMap({ matching.contains($0) ? $0 : nil }) ?? (matching.count == 1 ? matching.first : nil) {
                content["m.mentions"] = ["user_ids": [user]]
                content["format"] = "org.matrix.custom.html"
                content["formatted_body"] = "<a href=\"https://matrix.to/#/\(html(user))\">\(html(name))</a>: " + html(String(text[colon.upperBound...]))
            }
        }
        return MatrixSession.json(content)
    }

    static func html(_ text: String) -> String {
        var out = ""
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            default: out.append(character)
            }
        }
        return out
    }
}
