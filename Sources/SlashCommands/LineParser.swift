/// Turns one line of client input into a typed command, chat text, or a refusal
/// that carries the command's usage.
public struct LineParser: Sendable {
    /// Lines longer than this (in UTF-8 bytes) are refused with `too-long`.
    public var maximumLineBytes: Int

    public init(maximumLineBytes: Int = 4096) {
        self.maximumLineBytes = maximumLineBytes
    }

    public func parse(_ rawLine: Substring) -> Result<InputLine, CommandError> {
        var line = rawLine
        if line.last == "\r" { line = line.dropLast() }
        if line.utf8.count > maximumLineBytes {
            return .failure(CommandError(.tooLong, command: commandName(of: line),
                                         message: "a line has at most \(maximumLineBytes) bytes"))
        }
        if let problem = Self.controlCharacterProblem(line) {
            let name = commandName(of: line)
            let usage = name.map { " (usage: \(CommandTable.spec($0).usage))" } ?? ""
            return .failure(CommandError(.badArguments, command: name, message: problem + usage))
        }
        guard line.contains(where: { !$0.isWhitespace }) else { return .success(.empty) }
        guard line.first == "/" else { return .success(Self.chat(line)) }
        if line.hasPrefix("//") { return .success(Self.chat(line.dropFirst())) }

        let body = line.dropFirst()
        let nameEnd = body.firstIndex(where: { $0 == " " || $0 == "\t" }) ?? body.endIndex
        let word = body[body.startIndex..<nameEnd]
        guard let name = CommandName(rawValue: word.lowercased()) else {
            return .failure(CommandError(.unknownCommand, command: nil,
                                         message: "unknown command /\(excerpt(word)) (try /help)"))
        }
        let spec = CommandTable.spec(name)
        var reader = ArgumentReader(body[nameEnd...])
        do {
            return .success(.command(try spec.parse(&reader)))
        } catch {
            return .failure(CommandError(.badArguments, command: name,
                                         message: "/\(name.rawValue): \(error.reason) (usage: \(spec.usage))"))
        }
    }

    public func parse(_ line: String) -> Result<InputLine, CommandError> {
        parse(line[...])
    }

    /// Chat as others will read it (`ShownText.cleaned`); nothing when nothing
    /// visible is left, as for a blank line.
    private static func chat(_ text: Substring) -> InputLine {
        let shown = ShownText.cleaned(text)
        return shown.contains(where: { !$0.isWhitespace }) ? .chat(shown) : .empty
    }

    private func commandName(of line: Substring) -> CommandName? {
        guard line.first == "/", !line.hasPrefix("//") else { return nil }
        let word = line.dropFirst().prefix { $0 != " " && $0 != "\t" }.prefix(16)
        return CommandName(rawValue: word.lowercased())
    }

    /// C0 controls other than tab, DEL and C1 controls would let one member rewrite
    /// other members' terminals (escape sequences); line and paragraph separators
    /// would forge extra lines in the text encoding.
    static func controlCharacterProblem(_ line: Substring) -> String? {
        for scalar in line.unicodeScalars {
            let value = scalar.value
            if (value < 0x20 && value != 0x09) || (value >= 0x7F && value < 0xA0) || value == 0x2028 || value == 0x2029 {
                return "control characters and line separators are not allowed in a line"
            }
        }
        return nil
    }
}
