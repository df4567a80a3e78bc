import CowatchTime
import Foundation
import Logging

/// One line per event in logfmt (`ts=... level=info logger=... msg="..." key=value`),
/// easy for people to read and for log tools to parse.
struct LogfmtHandler: LogHandler {
    let label: String
    var logLevel: Logger.Level
    var metadata: Logger.Metadata = [:]

    init(label: String, level: Logger.Level) {
        self.label = label
        self.logLevel = level
    }

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        let line = Self.line(level: "\(event.level)", label: label, message: "\(event.message)",
                             metadata: metadata.merging(event.metadata ?? [:]) { $1 })
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }

    /// One event as a logfmt line, without its newline.
    static func line(level: String, label: String, message: String, metadata: Logger.Metadata) -> String {
        var line = "ts=\(SystemClock.date().formatted(.iso8601)) level=\(level) logger=\(label) msg=\(quote(message))"
        for (key, value) in metadata.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(quote("\(value)"))"
        }
        return line
    }

    static func quote(_ value: String) -> String {
        let plain = !value.isEmpty && value.allSatisfy { $0.isLetter || $0.isNumber || "._-:/".contains($0) }
        if plain { return value }
        var escaped = "\""
        for character in value {
            switch character {
            case "\"": escaped += "\\\""
            case "\\": escaped += "\\\\"
            case "\n": escaped += "\\n"
            default: escaped.append(character)
            }
        }
        return escaped + "\""
    }
}
