/// A member's display name: 1 to 32 visible characters, words separated by single
/// spaces ("Dana Scully"), that cannot pass for someone else's.
///
/// Names are normalized first: to Unicode's Normalization Form KC, so that
/// compatibility forms read as what they stand for ("Ａｌｉｃｅ" is "Alice"), then
/// spaces (and tabs, and other space characters) at either end are dropped, and
/// each run of them inside becomes one space, so that "  Dana   Scully " is
/// "Dana Scully". What is left must be visible: control, format and other
/// default-ignorable characters (zero-width joiners, bidirectional overrides,
/// variation selectors other than an emoji's, tags, the Hangul fillers) and the
/// blank U+2800 are
/// refused, as are names that Unicode's security mechanisms (UTS #39) say pass for
/// another: scripts mixed beyond its restriction level "moderately restrictive"
/// ("Аlice" with a Cyrillic А), digits of two number systems, hidden marks.
/// Names are matched case-insensitively by `/op`, `/kick`; a name with a space is
/// written in double quotes where more arguments follow it (`/kick "Dana Scully" spam`).
/// Whether a name is taken in a room is decided by its `lookalikeKeys`.
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

    /// A name as a store kept it. Names stored before the lookalike rules existed
    /// are still read (a store that could not be read would lose every room in
    /// it); they keep the rules of their time: visible characters within the
    /// limits. A room gives them a suffix when they look like a name present.
    public init?(stored text: String) {
        let normal = Self.normalized(text)
        guard Self.visibilityProblem(normal) == nil else { return nil }
        self.text = normal
    }

    public var description: String { text }

    /// The name of a member who gave none (or an invalid one).
    public static let guest = DisplayName(known: "guest")

    private init(known: String) { self.text = known }

    /// What decides whether this name is taken: two names that share a key can be
    /// mistaken for each other. The UTS #39 skeleton of the name as written (where
    /// capital I reads as l) and of the name in lower case (where "ALICE" is
    /// "alice").
    public var lookalikeKeys: [String] {
        let written = UnicodeSecurity.skeleton(text)
        let lower = UnicodeSecurity.skeleton(text.lowercased())
        return written == lower ? [written] : [written, lower]
    }

    /// `text` in NFKC, with spaces trimmed at both ends and collapsed to one inside.
    public static func normalized<S: StringProtocol>(_ text: S) -> String {
        var result = ""
        var pendingSpace = false
        for character in UnicodeSecurity.nfkc(String(text)) {
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
        return visibilityProblem(text) ?? UnicodeSecurity.spoofingProblem(text)
    }

    /// Length and visibility, for `text` already normalized.
    static func visibilityProblem(_ text: String) -> String? {
        if text.isEmpty { return "a name needs at least one character" }
        if text.utf8.count > maximumBytes || text.count > maximumCharacters {
            return "a name has at most \(maximumCharacters) characters"
        }
        var previous: Unicode.Scalar?
        for scalar in text.unicodeScalars {
            defer { previous = scalar }
            if scalar == " " || isVisibleInName(scalar) || isEmojiPresentation(scalar, after: previous) { continue }
            let named = scalar.properties.name.map { " " + $0 } ?? ""
            return "a name takes visible characters and single spaces only "
                + "(U+\(hex(scalar))\(named) is a control or invisible character)"
        }
        return nil
    }

    /// The variation selectors that choose an emoji's look (❤️ rather than ❤), kept
    /// after an emoji, the one place where they show: after a letter or digit they
    /// would make a second "Alice" that looks like the first.
    static func isEmojiPresentation(_ scalar: Unicode.Scalar, after previous: Unicode.Scalar?) -> Bool {
        guard scalar == "\u{FE0E}" || scalar == "\u{FE0F}", let previous else { return false }
        return previous.properties.isEmoji && !previous.isASCII
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

    /// Visible, and not a character that shows nothing: the default-ignorable code
    /// points (among them the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, which
    /// are letters, and the variation selectors, which are marks) and U+2800 BRAILLE
    /// PATTERN BLANK, a symbol that prints as a space.
    static func isVisibleInName(_ scalar: Unicode.Scalar) -> Bool {
        isVisible(scalar) && !scalar.properties.isDefaultIgnorableCodePoint && scalar != "\u{2800}"
    }

    static func hex(_ scalar: Unicode.Scalar) -> String {
        let digits = String(scalar.value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}
