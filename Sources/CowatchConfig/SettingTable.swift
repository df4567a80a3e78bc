import Foundation

/// The settings' table of docs/settings.md, written from the declarations, so
/// that the docs say what the programs take (the tests compare the two).
public enum SettingTable {
    /// One row per setting: its key, the form of its value and its bounds, its default and its meaning.
    public static func markdown<Target>(_ keys: [SettingKey<Target>], defaults: Target) -> String {
        var lines = ["| Key | Value | Default | Meaning |", "|---|---|---|---|"]
        for key in keys {
            let shown = key.shown(defaults).map { "`\($0)`" } ?? ""
            let meaning = key.help.first.map { $0.uppercased() + key.help.dropFirst() } ?? ""
            let value = key.form + (key.bounds.map { ", \($0)" } ?? "")
            lines.append("| `\(key.name)` | \(cell(value)) | \(cell(shown)) | \(cell(meaning)) |")
        }
        return lines.joined(separator: "\n") + "\n"
    }

    /// A table cell keeps its `|` as text.
    static func cell(_ text: String) -> String {
        String(text.flatMap { $0 == "|" ? ["\\", "|"] : [$0] })
    }

    /// The text between `<!-- begin NAME -->` and `<!-- end NAME -->` in `document`,
    /// without the marker lines; nil when the markers are missing.
    public static func section(_ name: String, in document: String) -> String? {
        let begin = "<!-- begin \(name) -->\n", end = "<!-- end \(name) -->"
        guard let start = document.range(of: begin), let stop = document.range(of: end, range: start.upperBound..<document.endIndex) else {
            return nil
        }
        return String(document[start.upperBound..<stop.lowerBound])
    }
}
