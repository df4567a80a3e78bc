import SlashCommands

/// Commands typed in a channel with a prefix (`!watch URL`, `!seek 1:23`),
/// since IRC clients keep `/` for themselves. A prefixed line becomes the slash
/// line the room understands and is checked by the room's own parser, against
/// the one command table, before it is sent: a bad command is answered in the
/// channel with the table's words, its `/` shown as the prefix.
public struct PrefixCommands: Sendable {
    /// What one line from the channel is for the room.
    public enum Reading: Hashable, Sendable {
        /// The line to send to the room as it is (a checked command, or chat,
        /// escaped where it starts with `/`).
        case line(String)
        /// The bare help command: answered by the bridge itself, shortly.
        case help
        /// Refused before the room saw it: the table's words.
        case refused(String)
        /// Nothing to send (a blank line).
        case nothing
    }

    public let prefix: String
    /// Lines starting with `/` are the room's own commands as well, for a
    /// network whose clients pass a slash they do not know (Matrix).
    public let slashCommands: Bool
    private let parser: LineParser

    /// `maximumLineBytes`: the room's line limit (docs/protocol.md, 4 KiB by default).
    public init(prefix: String, maximumLineBytes: Int = 4096, slashCommands: Bool = false) {
        self.prefix = prefix
        self.slashCommands = slashCommands
        parser = LineParser(maximumLineBytes: maximumLineBytes)
    }

    /// Reads a channel line; `action` for `/me` (IRC's CTCP ACTION).
    public func read(_ text: String, action: Bool) -> Reading {
        if action { return check("/me " + text) }
        if slashCommands, text.hasPrefix("/") {
            // As in the room: `/watch` is the command, `//text` the chat text `/text`.
            if text.hasPrefix("//") { return check(text) }
            if let first = text.dropFirst().unicodeScalars.first, first.isASCII, first.properties.isAlphabetic {
                if case .success(.command(.help(topic: nil))) = parser.parse(text) { return .help }
                return check(text)
            }
        }
        if !prefix.isEmpty, text.hasPrefix(prefix + prefix) {
            // `!!x` is the chat text `!x`, as `//x` is `/x` in the room.
            return check(escaped(String(text.dropFirst(prefix.count))))
        }
        if !prefix.isEmpty, text.hasPrefix(prefix),
           let first = text.dropFirst(prefix.count).unicodeScalars.first, first.isASCII, first.properties.isAlphabetic {
            let line = "/" + text.dropFirst(prefix.count)
            if case .success(.command(.help(topic: nil))) = parser.parse(line) { return .help }
            return check(line)
        }
        return check(escaped(text))
    }

    /// A chat line starting with `/` would be a command in the room.
    private func escaped(_ text: String) -> String {
        text.hasPrefix("/") ? "/" + text : text
    }

    private func check(_ line: String) -> Reading {
        switch parser.parse(line) {
        case .failure(let error): return .refused(localized(error.message))
        case .success(.empty): return .nothing
        case .success: return .line(line)
        }
    }

    /// The room's words with its commands written the way they are typed here:
    /// `/seek` becomes `!seek` where a command starts (the start of the text, or
    /// after a space, `(` or `"`), so links are left alone.
    public func localized(_ text: String) -> String {
        guard prefix != "/" else { return text }
        var result = ""
        var previous: Character?
        var rest = Substring(text)
        while let character = rest.first {
            rest = rest.dropFirst()
            let startsWord = previous == nil || previous == " " || previous == "(" || previous == "\""
            if character == "/", startsWord, let next = rest.unicodeScalars.first, next.isASCII, next.properties.isAlphabetic {
                result += prefix
            } else {
                result.append(character)
            }
            previous = character
        }
        return result
    }

    /// One line naming people's commands under `/help`'s headings, written with
    /// the prefix; players' and bots' reports are left to `help players`.
    public func helpLine() -> String {
        let groups = CommandReference.Group.allCases.filter { $0 != .players }.map { group in
            let names = CommandTable.specs.filter { CommandReference.group(of: $0) == group }.map { prefix + $0.name.rawValue }
            return "\(group.rawValue.lowercased()): \(names.joined(separator: " "))"
        }
        return "Cowatch commands, \(groups.joined(separator: "; ")) (\(prefix)help <command> explains one; "
            + "\(prefix)help players lists what players and bots send; \(prefix + prefix)text says text starting with \(prefix))"
    }
}
