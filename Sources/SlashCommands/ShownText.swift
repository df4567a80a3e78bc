/// Text that members write for others to read (chat, `/me`, titles, subtitle
/// labels, reasons), kept from rearranging or hiding what others see, and quoted
/// where a line of the text protocol quotes it.
public enum ShownText {
    /// `text` without the characters that would make others read something else
    /// than was written: the bidirectional controls (U+061C, U+200E, U+200F,
    /// U+202A to U+202E, U+2066 to U+2069), which reorder the rest of a line, and
    /// the other default-ignorable characters, which show nothing (zero-width
    /// spaces, word joiners, the Hangul fillers, tags used to smuggle text), and
    /// the interlinear annotation characters U+FFF9 to U+FFFB. Kept, because
    /// writing needs them and they cannot reorder or hide text: the zero-width
    /// joiner and non-joiner (emoji sequences, Persian, the Indic scripts),
    /// variation selectors (emoji or text presentation), and tags inside an emoji
    /// tag sequence (the flags of England, Scotland, Wales).
    public static func cleaned<S: StringProtocol>(_ text: S) -> String {
        guard text.unicodeScalars.contains(where: isRemoved) else { return String(text) }
        var result = ""
        for character in text {
            let emojiTagSequence = character.unicodeScalars.first == "\u{1F3F4}"
            for scalar in character.unicodeScalars where !isRemoved(scalar) || (emojiTagSequence && isTag(scalar)) {
                result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    static func isRemoved(_ scalar: Unicode.Scalar) -> Bool {
        let properties = scalar.properties
        if properties.isBidiControl { return true }
        if (0xFFF9...0xFFFB).contains(scalar.value) { return true }
        guard properties.isDefaultIgnorableCodePoint else { return false }
        return scalar != "\u{200C}" && scalar != "\u{200D}" && !properties.isVariationSelector
    }

    static func isTag(_ scalar: Unicode.Scalar) -> Bool { (0xE0020...0xE007F).contains(scalar.value) }

    /// `text` in double quotes, with `"` and `\` escaped by a backslash, so that a
    /// title holding quotes cannot end the quoted part early: `"Say \"hi\""`.
    public static func quoted(_ text: String) -> String {
        // By scalars: a quote followed by a combining mark is one Character, and
        // still a quote to a reader of the line.
        var result = "\""
        for scalar in text.unicodeScalars {
            if scalar == "\"" || scalar == "\\" { result.unicodeScalars.append("\\") }
            result.unicodeScalars.append(scalar)
        }
        return result + "\""
    }
}
