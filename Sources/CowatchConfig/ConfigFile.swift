import Foundation

/// One value given to a program, from a config file's line, an environment
/// variable or a flag, with where it came from for messages.
public struct SettingLine: Sendable, Hashable {
    public var key: String
    public var value: String
    /// `path:line`, `COWATCH_PORT`, `--port`.
    public var origin: String

    public init(key: String, value: String, origin: String) {
        self.key = key
        self.value = value
        self.origin = origin
    }
}

/// The config file format of `cowatch serve` and `cowatch bridge`: `key = value`
/// lines, `#` comments, blank lines ignored, a value in double quotes taken
/// without them, and, where a program has them, `[section]` headers that start a
/// group of lines (the bridge's `[pair]`).
public struct ConfigFile: Sendable, Hashable {
    public struct Section: Sendable, Hashable {
        public var name: String
        /// Where its header is.
        public var origin: String
        public var lines: [SettingLine]
    }

    /// The lines before the first section (all of them in a file without sections).
    public var top: [SettingLine] = []
    public var sections: [Section] = []

    /// The file at `path`, read as UTF-8 text and parsed.
    public static func read(path: String, sections allowed: Set<String> = []) throws(SettingsError) -> ConfigFile {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw SettingsError("cannot read the config file \(path)")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw SettingsError("the config file \(path) is not UTF-8 text")
        }
        return try parse(text, path: path, sections: allowed)
    }

    /// - Parameter allowed: the section names the program knows; none: a `[...]` line is refused.
    public static func parse(_ text: String, path: String, sections allowed: Set<String> = []) throws(SettingsError) -> ConfigFile {
        var file = ConfigFile()
        // By newline characters, so that a file written on Windows (`\r\n`, one
        // Character in Swift) is read line by line too.
        for (index, raw) in text.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline).enumerated() {
            let origin = "\(path):\(index + 1)"
            let line = trimmed(withoutComment(raw))
            guard !line.isEmpty else { continue }
            if line.hasPrefix("["), !allowed.isEmpty {
                let name = String(line.dropFirst().prefix { $0 != "]" })
                guard line == "[\(name)]", allowed.contains(name) else {
                    let known = allowed.sorted().map { "[\($0)]" }.joined(separator: ", ")
                    throw SettingsError("\(origin): the only \(allowed.count == 1 ? "section is" : "sections are") \(known), got \(line)")
                }
                file.sections.append(Section(name: name, origin: origin, lines: []))
                continue
            }
            let parts = line.split(separator: "=", maxSplits: 1).map { trimmed($0) }
            guard parts.count == 2, !parts[0].isEmpty else { throw SettingsError("\(origin): expected key = value") }
            var value = parts[1]
            if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") { value = String(value.dropFirst().dropLast()) }
            let setting = SettingLine(key: parts[0], value: value, origin: origin)
            if file.sections.isEmpty {
                file.top.append(setting)
            } else {
                file.sections[file.sections.count - 1].lines.append(setting)
            }
        }
        return file
    }

    /// `#` starts a comment at the start of a line or after a space, outside
    /// double quotes, so that `irc = irc://host/#channel` and `"a #b"` keep theirs.
    public static func withoutComment(_ line: Substring) -> Substring {
        var quoted = false
        var previous: Character = " "
        for index in line.indices {
            let character = line[index]
            if character == "\"" { quoted.toggle() }
            if character == "#", !quoted, previous.isWhitespace { return line[line.startIndex..<index] }
            previous = character
        }
        return line
    }

    /// Spaces and tabs off both ends.
    static func trimmed(_ text: Substring) -> String {
        text.trimmingCharacters(in: CharacterSet(charactersIn: " \t"))
    }
}
