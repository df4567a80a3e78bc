import SlashCommands

/// What must hold for any message, whatever its bytes. A broken property traps
/// with the line and what was seen, so libFuzzer keeps the input as a crash.
enum ParserProperties {
    static let parser = LineParser()
    /// A tight limit, so that the `too-long` path is reached by short inputs.
    static let smallLimit = 24
    static let smallParser = LineParser(maximumLineBytes: smallLimit)
    /// The longest refusal message: a usage, a sentence and quoted excerpts.
    static let maximumMessageBytes = 400

    static func check(_ bytes: UnsafeRawBufferPointer) {
        // As the gateway: invalid UTF-8 becomes U+FFFD, then the message is split
        // on "\n" (as a Character: "\r\n" is one Character and does not split).
        let text = String(decoding: bytes, as: UTF8.self)
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            checkLine(line)
        }
        // A line still holding a line feed (the message unsplit) is never accepted.
        if text.unicodeScalars.contains("\n"), case .success(let parsed) = parser.parse(text) {
            fail(text, "a line holding a line feed was accepted as \(parsed)")
        }
    }

    static func checkLine(_ line: Substring) {
        let result = parser.parse(line)
        // The parser drops one trailing "\r" (a CRLF terminal) before anything else.
        let body = line.last == "\r" ? line.dropLast() : line
        let bytes = body.utf8.count
        if bytes > parser.maximumLineBytes {
            guard case .failure(let error) = result, error.code == .tooLong else {
                fail(line, "a line of \(bytes) bytes was not refused as too long: \(result)")
            }
        } else if hasForbiddenScalar(body) {
            guard case .failure(let error) = result, error.code == .badArguments else {
                fail(line, "a line with control characters was not refused: \(result)")
            }
        }
        checkLimitConsistency(line, bytes: bytes, result: result)
        if line.last != "\r" {
            // Appending the "\r" of a CRLF terminal changes nothing.
            let withReturn = parser.parse(String(line) + "\r")
            if withReturn != result { fail(line, "adding \\r changed \(result) into \(withReturn)") }
        }
        switch result {
        case .success(.empty):
            // A line of bidirectional controls or invisible characters shows nothing.
            let shown = ShownText.cleaned(body.hasPrefix("//") ? body.dropFirst() : body)
            if shown.contains(where: { !$0.isWhitespace }) { fail(line, "a line with text was taken as empty") }
        case .success(.chat(let chat)):
            checkChat(chat, line: body)
        case .success(.command(let command)):
            checkCommand(command, line: body)
        case .failure(let error):
            checkRefusal(error, line: body)
        }
    }

    /// Under a smaller limit the outcome is the same for lines that fit it, and
    /// `too-long` naming the same command for lines that do not.
    static func checkLimitConsistency(_ line: Substring, bytes: Int, result: Result<InputLine, CommandError>) {
        let small = smallParser.parse(line)
        if bytes <= smallLimit {
            if small != result { fail(line, "limits \(smallLimit) and \(parser.maximumLineBytes) disagree: \(small) vs \(result)") }
            return
        }
        guard case .failure(let error) = small, error.code == .tooLong else {
            fail(line, "a line over the small limit was not refused as too long: \(small)")
        }
        if case .success(.command(let command)) = result, error.command != command.name {
            fail(line, "too-long names \(String(describing: error.command)) for a /\(command.name.rawValue) line")
        }
    }

    static func checkChat(_ chat: String, line: Substring) {
        let expected = ShownText.cleaned(line.hasPrefix("//") ? line.dropFirst() : line)
        if chat != expected { fail(line, "chat text \(chat.debugDescription) is not the line as typed, less what others must not read") }
        if ShownText.cleaned(chat) != chat { fail(line, "chat text \(chat.debugDescription) holds what others must not read") }
        if line.first == "/" && !line.hasPrefix("//") { fail(line, "a command line was taken as chat") }
        if hasForbiddenScalar(chat[...]) { fail(line, "chat text holds control characters") }
    }

    static func checkCommand(_ command: SlashCommand, line: Substring) {
        guard line.first == "/", !line.hasPrefix("//") else { fail(line, "chat was taken as \(command)") }
        let word = line.dropFirst().prefix { $0 != " " && $0 != "\t" }
        if word.lowercased() != command.name.rawValue {
            fail(line, "the line names /\(word) but parsed as /\(command.name.rawValue)")
        }
        if let problem = ValueBounds.problem(command) { fail(line, problem) }
        // Whatever is accepted describes itself without trouble (logs, /who, errors).
        _ = String(describing: command)
        CanonicalLine.checkRoundTrip(command, parser: parser, line: line)
    }

    static func checkRefusal(_ error: CommandError, line: Substring) {
        if hasForbiddenScalar(error.message[...]) || error.message.contains("\n") {
            fail(line, "the refusal's message holds control characters: \(error.message.debugDescription)")
        }
        // A refusal quotes at most a short excerpt of the line: the message goes back
        // over the wire and into logs, and must not grow with the line.
        if error.message.utf8.count > maximumMessageBytes {
            fail(line, "a refusal of \(error.message.utf8.count) bytes: \(error.message.prefix(80).debugDescription)...")
        }
        let named = line.first == "/" && !line.hasPrefix("//")
        if !named, error.command != nil {
            fail(line, "a chat line's refusal names /\(error.command?.rawValue ?? "")")
        }
        if error.code == .unknownCommand {
            let word = line.dropFirst().prefix { $0 != " " && $0 != "\t" }
            if error.command != nil || CommandName(rawValue: word.lowercased()) != nil {
                fail(line, "a known command was refused as unknown")
            }
        }
    }

    /// C0 controls other than tab, DEL, C1 controls and the Unicode line and
    /// paragraph separators: what no accepted line, and no message sent back, holds.
    static func hasForbiddenScalar(_ text: Substring) -> Bool {
        text.unicodeScalars.contains { scalar in
            let value = scalar.value
            return (value < 0x20 && value != 0x09) || (value >= 0x7F && value < 0xA0) || value == 0x2028 || value == 0x2029
        }
    }

    static func fail(_ line: some StringProtocol, _ problem: String) -> Never {
        fatalError("parser property broken for line \(String(line).debugDescription): \(problem)")
    }
}
