import ArgumentParser
import CowatchConfig

/// A command's settings on its command line, read from the settings'
/// declarations (`SettingKey`) and from nothing else: ArgumentParser only
/// dispatches to the command and shows its help, whose list of options is
/// written from the same declarations. A key is `--KEY VALUE` or `--KEY=VALUE`;
/// a switch (`isSwitch`) is `--KEY` alone (or `--KEY=false`).
struct SettingOptions<Target>: Sendable {
    let keys: [SettingKey<Target>]
    /// The command's own options that are no setting (the bridge's `--config`), with their words.
    var own: [(name: String, form: String, help: String)] = []
    /// The setting a bare argument gives (the bridge's IRC channel), if any.
    var positional: String?

    /// The values given, by key (a switch given is `true`; the command's own options too).
    func parse(_ arguments: [String]) throws -> [String: String] {
        var values: [String: String] = [:]
        var index = 0
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            if argument == "--help" || argument == "-h" { throw CleanExit.helpRequest() }
            guard argument.hasPrefix("--"), argument.count > 2 else {
                guard let positional, values[positional] == nil, !argument.hasPrefix("-") else {
                    throw ValidationError("unexpected argument '\(argument)'")
                }
                values[positional] = argument
                continue
            }
            let body = argument.dropFirst(2)
            let name = String(body.prefix { $0 != "=" })
            let attached = body.contains("=") ? String(body.drop { $0 != "=" }.dropFirst()) : nil
            let isSwitch: Bool
            if let key = keys.first(where: { $0.name == name && $0.name != positional }) {
                isSwitch = key.isSwitch
            } else if own.contains(where: { $0.name == name }) {
                isSwitch = false
            } else {
                throw ValidationError("unknown option '--\(name)'" + suggestion(for: name))
            }
            if let attached {
                values[name] = attached
            } else if isSwitch {
                values[name] = "true"
            } else {
                guard index < arguments.count, !arguments[index].hasPrefix("--") else {
                    throw ValidationError("missing value for '--\(name)'")
                }
                values[name] = arguments[index]
                index += 1
            }
        }
        return values
    }

    /// The options for `--help`: each declared key with its form, meaning and
    /// default, wrapped here to `columns` under its key (ArgumentParser would
    /// wrap a long line back to the margin).
    func help(defaults: Target, columns: Int = 80) -> String {
        var rows: [(String, String)] = own.map { ("--\($0.name) \($0.form)", $0.help) }
        for key in keys {
            let left = key.name == positional ? "<\(key.name)>" : "--\(key.name)" + (key.isSwitch ? "" : " \(key.form)")
            rows.append((left, key.help(defaults: defaults)))
        }
        let indent = min(34, rows.map(\.0.count).max() ?? 0) + 4
        return rows.map { left, words in
            let first = "  " + left
            let lines = Self.wrapped(words, width: max(20, columns - 1 - indent))
            let head = first.count < indent ? first + String(repeating: " ", count: indent - first.count) + (lines.first ?? "")
                : first + "\n" + String(repeating: " ", count: indent) + (lines.first ?? "")
            return ([head] + lines.dropFirst().map { String(repeating: " ", count: indent) + $0 }).joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// Words in lines of at most `width` characters (a longer word alone on its line).
    static func wrapped(_ text: String, width: Int) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ") {
            if !line.isEmpty, line.count + 1 + word.count > width {
                lines.append(line)
                line = ""
            }
            line += (line.isEmpty ? "" : " ") + word
        }
        return line.isEmpty ? lines : lines + [line]
    }

    /// " (did you mean '--max-rooms'?)" for a key one or two letters off a declared one.
    private func suggestion(for name: String) -> String {
        let names = keys.map(\.name).filter { $0 != positional } + own.map(\.name)
        guard let closest = names.map({ (name: $0, distance: Self.distance($0, name)) }).min(by: { $0.distance < $1.distance }),
              closest.distance <= 2 else { return "" }
        return " (did you mean '--\(closest.name)'?)"
    }

    /// Levenshtein's distance between two keys, by the usual one-row table:
    /// written here because neither the standard library nor Foundation has one,
    /// and keys are a few dozen letters.
    static func distance(_ a: String, _ b: String) -> Int {
        let b = Array(b)
        var row = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var diagonal = row[0]
            row[0] = i + 1
            for (j, y) in b.enumerated() {
                let above = row[j + 1]
                row[j + 1] = min(above + 1, row[j] + 1, diagonal + (x == y ? 0 : 1))
                diagonal = above
            }
        }
        return row[b.count]
    }
}
