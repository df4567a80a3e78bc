/// A member's display name: 1 to 32 visible characters, words separated by single
/// spaces ("Dana Scully").
///
/// Names are normalized first: spaces (and tabs, and other space characters) at
/// either end are dropped, and each run of them inside becomes one space, so that
/// "  Dana   Scully " is "Dana Scully". What is left must be visible: control and
/// format characters are refused (they include zero-width joiners and
/// bidirectional overrides that make two names look alike or reorder a chat line).
/// Names are matched case-insensitively by `/op`, `/kick`; a name with a space is
/// written in double quotes where more arguments follow it (`/kick "Dana Scully" spam`).
public struct DisplayName: Hashable, Sendable, CustomStringConvertible {
    public static let maximumCharacters = 32
    /// Caps grapheme clusters built from hundreds of combining marks.
    public static let maximumBytes = 128

    public let text: String

    public init?(_ text: String) {
        let normal = Self.normalized(text)
        guard Self.validationProblem(normal) == nil else { return nil }
        self.text = normal
    }

    public var description: String { text }

    /// The name of a member who gave none (or an invalid one).
    public static let guest = DisplayName(known: "guest")

    private init(known: String) { self.text = known }

    /// `text` with spaces trimmed at both ends and collapsed to one inside.
    public static func normalized<S: StringProtocol>(_ text: S) -> String {
        var result = ""
        var pendingSpace = false
        for character in text {
            if character.unicodeScalars.allSatisfy(isSpace) {
                pendingSpace = !result.isEmpty
            } else {
                if pendingSpace { result.append(" ") }
                pendingSpace = false
                result.append(character)
            }
        }
        return result
    }

    /// Why `text` (once normalized) is not a valid name, or nil when it is.
    public static func validationProblem(_ text: String) -> String? {
        let text = normalized(text)
        if text.isEmpty { return "a name needs at least one character" }
        if text.utf8.count > maximumBytes || text.count > maximumCharacters {
            return "a name has at most \(maximumCharacters) characters"
        }
        for scalar in text.unicodeScalars where scalar != " " && !isVisible(scalar) {
            return "a name takes visible characters and single spaces only (no control or invisible characters)"
        }
        return nil
    }

    static func isSpace(_ scalar: Unicode.Scalar) -> Bool {
        scalar == "\t" || scalar.properties.generalCategory == .spaceSeparator
    }

    static func isVisible(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.properties.generalCategory {
        case .control, .format, .spaceSeparator, .lineSeparator, .paragraphSeparator,
             .surrogate, .privateUse, .unassigned:
            return false
        default:
            return true
        }
    }
}
