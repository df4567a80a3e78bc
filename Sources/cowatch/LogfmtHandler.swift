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
        var line = "ts=\(SystemClock.date().formatted(.iso8601)) level=\(event.level) logger=\(label) msg=\(Self.quote("\(event.message)"))"
        let merged = metadata.merging(event.metadata ?? [:]) { $1 }
        for (key, value) in merged.sorted(by: { $0.key < $1.key }) {
            line += " \(key)=\(Self.quote("\(value)"))"
        }
        line += "\n"
        FileHandle.standardError.write(Data(line.utf8))
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
