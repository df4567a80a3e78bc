/// Text as IRC clients write and read it: mIRC formatting codes, CTCP (for
/// `/me`), nick comparison under the server's case mapping, and cutting text
/// into lines that fit the protocol's byte limit.
public enum IRCText {
    /// What a message says once its formatting codes are gone: bold (0x02),
    /// colours (0x03 with up to two foreground and two background digits, 0x04
    /// with hexadecimal ones), reset (0x0F), monospace (0x11), reverse (0x16),
    /// italic (0x1D), strike-through (0x1E), underline (0x1F). The room refuses
    /// control characters in a line, so any other one is dropped too, and a tab
    /// becomes a space.
    public static func plain(_ text: String) -> String {
        var result = String.UnicodeScalarView()
        var scalars = text.unicodeScalars[...]
        while let scalar = scalars.popFirst() {
            switch scalar.value {
            case 0x03:
                skip(&scalars, digitsOf: isDecimal, upTo: 2)
            case 0x04:
                skip(&scalars, digitsOf: isHexadecimal, upTo: 6)
            case 0x09:
                result.append(" ")
            case 0x00..<0x20, 0x7F..<0xA0, 0x2028, 0x2029:
                continue
            default:
                result.append(scalar)
            }
        }
        return String(result)
    }

    /// After a colour code: the foreground, and `,background` only when digits follow the comma.
    private static func skip(_ scalars: inout Substring.UnicodeScalarView.SubSequence,
                             digitsOf isDigit: (Unicode.Scalar) -> Bool, upTo count: Int) {
        var taken = 0
        while taken < count, let next = scalars.first, isDigit(next) {
            scalars.removeFirst()
            taken += 1
        }
        guard taken > 0, scalars.first == ",", let afterComma = scalars.dropFirst().first, isDigit(afterComma) else { return }
        scalars.removeFirst()
        taken = 0
        while taken < count, let next = scalars.first, isDigit(next) {
            scalars.removeFirst()
            taken += 1
        }
    }

    private static func isDecimal(_ scalar: Unicode.Scalar) -> Bool { ("0"..."9").contains(scalar) }
    private static func isHexadecimal(_ scalar: Unicode.Scalar) -> Bool {
        isDecimal(scalar) || ("a"..."f").contains(scalar) || ("A"..."F").contains(scalar)
    }

    // MARK: - CTCP

    static let ctcpDelimiter: Character = "\u{01}"

    /// A CTCP request in a PRIVMSG or NOTICE: its command (upper-cased) and the rest.
    public static func ctcp(_ text: String) -> (command: String, argument: String)? {
        guard text.first == ctcpDelimiter else { return nil }
        var body = text.dropFirst()
        if body.last == ctcpDelimiter { body = body.dropLast() }
        let space = body.firstIndex(of: " ")
        let command = body[body.startIndex..<(space ?? body.endIndex)]
        guard !command.isEmpty else { return nil }
        let argument = space.map { body[body.index(after: $0)...] } ?? ""
        return (command.uppercased(), String(argument))
    }

    /// `/me waves` as IRC sends it.
    public static func action(_ text: String) -> String {
        "\u{01}ACTION \(text)\u{01}"
    }

    public static func ctcpReply(_ command: String, _ argument: String) -> String {
        "\u{01}\(command)\(argument.isEmpty ? "" : " " + argument)\u{01}"
    }

    // MARK: - Cutting to size

    /// `text` cut into pieces of at most `maximumBytes` UTF-8 bytes each, at the
    /// last space that fits when there is one, never inside a character. At most
    /// `maximumPieces`; when more would be needed the last piece ends in "…".
    public static func pieces(_ text: String, maximumBytes: Int, maximumPieces: Int) -> [String] {
        let ellipsis = "…"
        guard maximumBytes > ellipsis.utf8.count, maximumPieces > 0 else { return [] }
        var result: [String] = []
        var rest = Substring(text)
        while !rest.isEmpty {
            if rest.utf8.count <= maximumBytes {
                result.append(String(rest))
                break
            }
            if result.count == maximumPieces - 1 {
                result.append(String(prefix(rest, bytes: maximumBytes - ellipsis.utf8.count)) + ellipsis)
                break
            }
            let head = prefix(rest, bytes: maximumBytes)
            if let space = head.lastIndex(of: " "), space > head.startIndex {
                result.append(String(head[head.startIndex..<space]))
                rest = rest[rest.index(after: space)...]
            } else {
                result.append(String(head))
                rest = rest[head.endIndex...]
            }
        }
        return result
    }

    /// The longest start of `text` that takes at most `bytes` UTF-8 bytes and
    /// ends between characters; between scalars when even the first character
    /// is longer than that (hundreds of combining marks make one character).
    static func prefix(_ text: Substring, bytes: Int) -> Substring {
        var used = 0
        var end = text.startIndex
        for index in text.indices {
            let size = text[index].utf8.count
            if used + size > bytes { break }
            used += size
            end = text.index(after: index)
        }
        if end == text.startIndex {
            for index in text.unicodeScalars.indices {
                let size = text.unicodeScalars[index].utf8.count
                if used + size > bytes { break }
                used += size
                end = text.unicodeScalars.index(after: index)
            }
        }
        return text[text.startIndex..<end]
    }
}

/// How a server compares nicks and channel names (ISUPPORT `CASEMAPPING`). RFC
/// 1459 counts `[]\~` as the upper case of `{}|^`; `ascii` only letters.
public enum IRCCaseMapping: String, Sendable, Hashable {
    case rfc1459
    case strictRFC1459 = "strict-rfc1459"
    case ascii

    public func fold(_ text: String) -> String {
        String(String.UnicodeScalarView(text.unicodeScalars.map { scalar -> Unicode.Scalar in
            switch scalar {
            case "A"..."Z": return Unicode.Scalar(scalar.value + 32) ?? scalar
            case "[" where self != .ascii: return "{"
            case "]" where self != .ascii: return "}"
            case "\\" where self != .ascii: return "|"
            case "~" where self == .rfc1459: return "^"
            default: return scalar
            }
        }))
    }
}
