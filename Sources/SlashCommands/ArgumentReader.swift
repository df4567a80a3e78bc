/// Reads a command's arguments left to right: words split on spaces, or the rest
/// of the line verbatim for titles and action text.
public struct ArgumentReader: Sendable {
    private var rest: Substring

    public init(_ arguments: Substring) {
        self.rest = arguments
        skipSpaces()
    }

    public var isAtEnd: Bool { rest.isEmpty }

    /// The next space-separated word, or nil at the end.
    public mutating func word() -> Substring? {
        guard !rest.isEmpty else { return nil }
        let end = rest.firstIndex(where: { $0 == " " || $0 == "\t" }) ?? rest.endIndex
        let word = rest[rest.startIndex..<end]
        rest = rest[end...]
        skipSpaces()
        return word
    }

    /// The next word without consuming it.
    public func peek() -> Substring? {
        var copy = self
        return copy.word()
    }

    /// Everything left, trailing spaces removed; nil when nothing is left.
    public mutating func remainder() -> Substring? {
        guard !rest.isEmpty else { return nil }
        var text = rest
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        rest = rest[rest.endIndex...]
        return text
    }

    /// A double-quoted argument (a name with spaces), without its quotes; nil when
    /// the next argument does not start with a quote. It ends at the first quote
    /// followed by a space or the end of the line.
    public mutating func quoted() throws(ArgumentProblem) -> Substring? {
        guard rest.first == "\"" else { return nil }
        let inside = rest.dropFirst()
        var index = inside.startIndex
        while index < inside.endIndex {
            let after = inside.index(after: index)
            if inside[index] == "\"", after == inside.endIndex || inside[after] == " " || inside[after] == "\t" {
                rest = inside[after...]
                skipSpaces()
                return inside[inside.startIndex..<index]
            }
            index = after
        }
        throw ArgumentProblem("a quoted name needs its closing quote")
    }

    public mutating func requireWord(_ what: String) throws(ArgumentProblem) -> Substring {
        guard let word = word() else { throw ArgumentProblem("missing \(what)") }
        return word
    }

    public func requireEnd() throws(ArgumentProblem) {
        if let extra = peek() { throw ArgumentProblem("unexpected \"\(excerpt(extra))\"") }
    }

    private mutating func skipSpaces() {
        while let first = rest.first, first == " " || first == "\t" { rest = rest.dropFirst() }
    }
}
