/// One IRC protocol message, as RFC 1459 and RFC 2812 define it and servers send
/// it today: optional IRCv3 tags (`@a=b;c`), an optional prefix (`:nick!user@host`
/// or a server name), a command (a word or a three-digit numeric) and at most 15
/// parameters, the last of which may be "trailing" (after ` :`, spaces allowed).
///
/// Parsing is lenient about what real servers send (several spaces between
/// parameters, a bare `\n`); serializing is strict: a message that cannot be one
/// line of at most `maximumBytes` is refused rather than cut or split here.
public struct IRCMessage: Hashable, Sendable {
    public var tags: [String: String]
    public var prefix: IRCPrefix?
    /// Upper-cased (`PRIVMSG`, `001`).
    public var command: String
    public var parameters: [String]

    public init(prefix: IRCPrefix? = nil, command: String, _ parameters: [String] = [], tags: [String: String] = [:]) {
        self.tags = tags
        self.prefix = prefix
        self.command = command.uppercased()
        self.parameters = parameters
    }

    /// RFC 2812 2.3: 512 bytes, CR-LF included. Tags (IRCv3) come on top of it.
    public static let standardMaximumBytes = 512
    /// IRCv3 message-tags: tags may take up to 8191 bytes of their own.
    public static let maximumTagBytes = 8191
    /// RFC 2812 2.3: 14 middle parameters and one trailing.
    public static let maximumParameters = 15

    /// Parses one line without its CR-LF (a stray `\r` at the end is dropped).
    /// Nil for a line with no command.
    public static func parse<S: StringProtocol>(_ text: S) -> IRCMessage? {
        var rest = Substring(text)
        // By scalars: "\r\n" is one Character, equal to neither "\r" nor "\n".
        while let last = rest.unicodeScalars.last, last == "\r" || last == "\n" {
            rest = Substring(rest.unicodeScalars.dropLast())
        }
        var tags: [String: String] = [:]
        if rest.first == "@" {
            let end = rest.firstIndex(of: " ") ?? rest.endIndex
            for pair in rest[rest.index(after: rest.startIndex)..<end].split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
                tags[String(parts[0])] = parts.count > 1 ? unescapeTag(parts[1]) : ""
            }
            rest = rest[end...].drop { $0 == " " }
        }
        var prefix: IRCPrefix?
        if rest.first == ":" {
            let end = rest.firstIndex(of: " ") ?? rest.endIndex
            prefix = IRCPrefix(rest[rest.index(after: rest.startIndex)..<end])
            rest = rest[end...].drop { $0 == " " }
        }
        let commandEnd = rest.firstIndex(of: " ") ?? rest.endIndex
        let command = rest[rest.startIndex..<commandEnd]
        guard !command.isEmpty else { return nil }
        rest = rest[commandEnd...]
        var parameters: [String] = []
        while true {
            rest = rest.drop { $0 == " " }
            guard !rest.isEmpty else { break }
            if rest.first == ":" || parameters.count == maximumParameters - 1 {
                // The trailing parameter: the rest of the line, spaces and all.
                parameters.append(String(rest.first == ":" ? rest.dropFirst() : rest))
                break
            }
            let end = rest.firstIndex(of: " ") ?? rest.endIndex
            parameters.append(String(rest[rest.startIndex..<end]))
            rest = rest[end...]
        }
        var message = IRCMessage(prefix: prefix, command: String(command), parameters)
        message.tags = tags
        return message
    }

    public enum Problem: Error, Hashable, Sendable {
        /// CR, LF or NUL inside a parameter would end or corrupt the line.
        case forbiddenCharacter
        /// Only the last parameter may be empty, hold a space or start with `:`.
        case badMiddleParameter
        case tooManyParameters
        case emptyCommand
        /// The line with its CR-LF would be longer than allowed.
        case tooLong(bytes: Int)
    }

    /// The line to send, without CR-LF. Tags are not sent (the bridge asks for
    /// no IRCv3 capabilities).
    public func line(maximumBytes: Int = standardMaximumBytes) -> Result<String, Problem> {
        guard !command.isEmpty, command.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber) }) else {
            return .failure(.emptyCommand)
        }
        guard parameters.count <= Self.maximumParameters else { return .failure(.tooManyParameters) }
        var text = ""
        if let prefix { text += ":" + prefix.description + " " }
        text += command
        for (index, parameter) in parameters.enumerated() {
            if parameter.unicodeScalars.contains(where: { $0 == "\r" || $0 == "\n" || $0 == "\0" }) {
                return .failure(.forbiddenCharacter)
            }
            let last = index == parameters.count - 1
            let needsTrailing = parameter.isEmpty || parameter.contains(" ") || parameter.hasPrefix(":")
            if needsTrailing && !last { return .failure(.badMiddleParameter) }
            text += needsTrailing ? " :" + parameter : " " + parameter
        }
        let bytes = text.utf8.count + 2
        guard bytes <= maximumBytes else { return .failure(.tooLong(bytes: bytes)) }
        return .success(text)
    }

    /// The nick of a message's sender, when a user sent it.
    public var nick: String? { prefix?.nick }

    private static func unescapeTag(_ value: Substring) -> String {
        var result = ""
        var escaping = false
        for character in value {
            if escaping {
                switch character {
                case ":": result.append(";")
                case "s": result.append(" ")
                case "r": result.append("\r")
                case "n": result.append("\n")
                default: result.append(character)
                }
                escaping = false
            } else if character == "\\" {
                escaping = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}

/// Who sent a message: `nick!user@host` for a user, a bare name for a server.
public struct IRCPrefix: Hashable, Sendable, CustomStringConvertible {
    /// The nick, or the server's name.
    public var name: String
    public var user: String?
    public var host: String?

    public init(name: String, user: String? = nil, host: String? = nil) {
        self.name = name
        self.user = user
        self.host = host
    }

    init(_ text: Substring) {
        var rest = text
        if let at = rest.firstIndex(of: "@") {
            host = String(rest[rest.index(after: at)...])
            rest = rest[rest.startIndex..<at]
        }
        if let bang = rest.firstIndex(of: "!") {
            user = String(rest[rest.index(after: bang)...])
            rest = rest[rest.startIndex..<bang]
        }
        name = String(rest)
    }

    /// The nick when this is a user (servers' names hold a dot and no `!`/`@`).
    public var nick: String? {
        if user != nil || host != nil { return name }
        return name.contains(".") ? nil : name
    }

    public var description: String {
        name + (user.map { "!" + $0 } ?? "") + (host.map { "@" + $0 } ?? "")
    }
}
