/// One setting a program takes: its key (a flag without its dashes, a config
/// file's key, an environment variable's name after its prefix), what it means,
/// and how a text value is checked and applied to the program's settings.
public struct SettingKey<Target>: Sendable {
    public let name: String
    public let help: String
    /// Refuses a value with a `SettingsError` saying what was expected.
    public let apply: @Sendable (String, inout Target) throws -> Void

    public init(_ name: String, help: String = "", apply: @escaping @Sendable (String, inout Target) throws -> Void) {
        self.name = name
        self.help = help
        self.apply = apply
    }
}

/// Where settings come from and in which order, the same for every program:
/// defaults, then the config file, then the environment, then the flags, each
/// value checked by its key and refused with where it came from.
public enum SettingSources {
    /// `prefix` + the key in upper case with `_` for `-`: `COWATCH_MAX_MEMBERS`.
    public static func environmentName(_ key: String, prefix: String) -> String {
        prefix + String(key.uppercased().map { $0 == "-" ? "_" : $0 })
    }

    /// The environment's values for `keys`, in the keys' order.
    public static func environment(_ environment: [String: String], keys: [String], prefix: String) -> [SettingLine] {
        keys.compactMap { key in
            let name = environmentName(key, prefix: prefix)
            return environment[name].map { SettingLine(key: key, value: $0, origin: name) }
        }
    }

    /// The command line's values, in a fixed order (by key), each from `--key`.
    public static func flags(_ flags: [String: String]) -> [SettingLine] {
        flags.sorted { $0.key < $1.key }.map { SettingLine(key: $0.key, value: $0.value, origin: "--\($0.key)") }
    }

    /// Applies `lines` in order (a later one wins): an unknown key or a refused
    /// value stops with where it came from. `applied` is told each line taken.
    public static func apply<Target>(_ lines: [SettingLine], keys: [SettingKey<Target>], to target: inout Target,
                                     applied: (SettingLine) -> Void = { _ in }) throws(SettingsError) {
        for line in lines {
            guard let key = keys.first(where: { $0.name == line.key }) else {
                throw SettingsError("\(line.origin): unknown setting \"\(line.key)\" (known: \(keys.map(\.name).joined(separator: ", ")))")
            }
            do {
                try key.apply(line.value, &target)
            } catch let refusal as SettingsError {
                throw SettingsError("\(line.origin): \(refusal.message), got \"\(line.value)\"")
            } catch {
                throw SettingsError("\(line.origin): \(error), got \"\(line.value)\"")
            }
            applied(line)
        }
    }
}

/// Values as settings take them, each refused in the same words everywhere.
public enum SettingValue {
    public static func integer(_ text: String, _ range: ClosedRange<Int>) throws(SettingsError) -> Int {
        guard let value = Int(text.trimmingSpaces()), range.contains(value) else {
            throw SettingsError("expected a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    public static func number(_ text: String, _ range: ClosedRange<Double>) throws(SettingsError) -> Double {
        guard let value = Double(text.trimmingSpaces()), value.isFinite, range.contains(value) else {
            throw SettingsError("expected a number from \(range.lowerBound) to \(range.upperBound)")
        }
        return value
    }

    public static func boolean(_ text: String) throws(SettingsError) -> Bool {
        switch text.trimmingSpaces().lowercased() {
        case "true", "yes", "on", "1": return true
        case "false", "no", "off", "0": return false
        default: throw SettingsError("expected true or false")
        }
    }

    /// A comma-separated list; blanks around items and empty items are dropped.
    public static func list(_ text: String) -> [String] {
        text.split(separator: ",").map { $0.trimmingSpaces() }.filter { !$0.isEmpty }
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
