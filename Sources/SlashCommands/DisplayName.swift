/// A member's display name: 1 to 32 visible characters.
///
/// "Visible" rules out whitespace, control and format characters (which include
/// zero-width joiners and bidirectional overrides that make two names look alike or
/// reorder a chat line). Names are matched case-insensitively by `/op`, `/kick`.
public struct DisplayName: Hashable, Sendable, CustomStringConvertible {
    public static let maximumCharacters = 32
    /// Caps grapheme clusters built from hundreds of combining marks.
    public static let maximumBytes = 128

    public let text: String

    public init?(_ text: String) {
        guard Self.validationProblem(text) == nil else { return nil }
        self.text = text
    }

    public var description: String { text }

    /// The name of a member who gave none (or an invalid one).
    public static let guest = DisplayName(known: "guest")

    private init(known: String) { self.text = known }

    /// Why `text` is not a valid name, or nil when it is.
    public static func validationProblem(_ text: String) -> String? {
        if text.isEmpty { return "a name needs at least one character" }
        if text.utf8.count > maximumBytes || text.count > maximumCharacters {
            return "a name has at most \(maximumCharacters) characters"
        }
        for scalar in text.unicodeScalars where !isVisible(scalar) {
            return "a name takes visible characters only (no spaces or control characters)"
        }
        return nil
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
