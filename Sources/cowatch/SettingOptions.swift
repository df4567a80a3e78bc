import ArgumentParser

/// The values a parsed command was given for its settings, by key, read from its
/// own options rather than from a second list of them: each `@Option` or
/// `@Argument` of text and each `@Flag` switch is the setting whose key is its
/// name as ArgumentParser writes the long option (`maxRooms`: `max-rooms`).
/// A switch given is `true`. The tests in Tests/CowatchCommandLineTests hold
/// the options to the settings' declarations.
enum SettingOptions {
    static func values(of command: some ParsableCommand) -> [String: String] {
        var values: [String: String] = [:]
        for child in Mirror(reflecting: command).children {
            guard let label = child.label, label.hasPrefix("_") else { continue }
            let key = self.key(label.dropFirst())
            switch child.value {
            case let option as Option<String?>: if let value = option.wrappedValue { values[key] = value }
            case let argument as Argument<String?>: if let value = argument.wrappedValue { values[key] = value }
            case let flag as Flag<Bool>: if flag.wrappedValue { values[key] = "true" }
            default: continue
            }
        }
        return values
    }

    /// `maxRooms` as `max-rooms`, `youtubeApiUrl` as `youtube-api-url`.
    static func key(_ name: Substring) -> String {
        var key = ""
        for character in name {
            if character.isUppercase {
                key += "-" + character.lowercased()
            } else {
                key.append(character)
            }
        }
        return key
    }
}
