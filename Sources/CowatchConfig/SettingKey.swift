/// One setting a program takes, declared once: its key (a flag without its
/// dashes, a config file's key, an environment variable's name after its
/// prefix), what it means, the form of its value, its default, and how a text
/// value is checked and applied to the program's settings. The command line's
/// help, the example config files and docs/settings.md are written from it, or
/// checked against it by the tests.
public struct SettingKey<Target>: Sendable {
    public let name: String
    /// What the setting means, as a sentence that starts in lower case and has
    /// no final stop and no default: `help(defaults:)` adds both.
    public let help: String
    /// How a value is written: `N`, `SECONDS`, `true|false`, `sqlite|memory|postgres`, ...
    public let form: String
    /// Given alone on the command line (`--echo` for `echo = true`); in the config
    /// file and the environment it takes `true` or `false` like every boolean.
    public let isSwitch: Bool
    /// The values taken, in words (`1 to 65535`), where they are a range.
    public let bounds: String?
    /// The setting's value in `defaults` as a config file writes it; nil when it
    /// has none worth showing (an empty list, a file nobody named).
    public let shown: @Sendable (Target) -> String?
    /// Refuses a value with a `SettingsError` saying what was expected.
    public let apply: @Sendable (String, inout Target) throws -> Void

    public init(_ name: String, help: String = "", form: String = "VALUE", isSwitch: Bool = false, bounds: String? = nil,
                shown: @escaping @Sendable (Target) -> String? = { _ in nil },
                apply: @escaping @Sendable (String, inout Target) throws -> Void) {
        self.name = name
        self.help = help
        self.form = form
        self.isSwitch = isSwitch
        self.bounds = bounds
        self.shown = shown
        self.apply = apply
    }

    /// The words of `--help`: the meaning as a sentence, with the default that
    /// `defaults` holds.
    public func help(defaults: Target) -> String {
        guard let first = help.first else { return "" }
        let sentence = first.uppercased() + help.dropFirst()
        guard let value = shown(defaults) else { return sentence + "." }
        return sentence + " (default \(value))."
    }
}

/// The kinds of value most settings are, each parsed and refused in the same
/// words (`SettingValue`) and shown as a config file writes them.
extension SettingKey {
    public static func integer(_ name: String, _ range: ClosedRange<Int>, _ path: WritableKeyPath<Target, Int> & Sendable,
                               help: String, form: String = "N") -> Self {
        Self(name, help: help, form: form, bounds: SettingValue.bounds(range), shown: { String($0[keyPath: path]) }) { value, target in
            target[keyPath: path] = try SettingValue.integer(value, range)
        }
    }

    public static func number(_ name: String, _ range: ClosedRange<Double>, _ path: WritableKeyPath<Target, Double> & Sendable,
                              help: String, form: String = "NUMBER") -> Self {
        Self(name, help: help, form: form, bounds: SettingValue.bounds(range), shown: { SettingValue.written($0[keyPath: path]) }) { value, target in
            target[keyPath: path] = try SettingValue.number(value, range)
        }
    }

    /// A length of time, written in seconds (`1.5`).
    public static func duration(_ name: String, _ range: ClosedRange<Duration>, _ path: WritableKeyPath<Target, Duration> & Sendable,
                                help: String) -> Self {
        Self(name, help: help, form: "SECONDS", bounds: SettingValue.bounds(range), shown: { SettingValue.written($0[keyPath: path]) }) { value, target in
            target[keyPath: path] = try SettingValue.duration(value, range)
        }
    }

    public static func boolean(_ name: String, _ path: WritableKeyPath<Target, Bool> & Sendable, help: String,
                               isSwitch: Bool = false) -> Self {
        Self(name, help: help, form: "true|false", isSwitch: isSwitch, shown: { String($0[keyPath: path]) }) { value, target in
            target[keyPath: path] = try SettingValue.boolean(value)
        }
    }
}

/// Where settings come from and in which order, the same for every program:
/// defaults, then the config file, then the environment, then the flags, each
/// value checked by its key and refused with where it came from; then the
/// checks that look at several settings together.
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

    /// Runs the checks that no single value can make (a store that needs an
    /// address, two settings that must agree), in order: the first refusal stops.
    public static func check<Target>(_ target: Target, rules: [SettingRule<Target>]) throws(SettingsError) {
        for rule in rules { try rule.check(target) }
    }
}

/// A check across settings, made once every source is applied: a refusal names
/// the settings involved, as they are written on the command line.
public struct SettingRule<Target>: Sendable {
    public let check: @Sendable (Target) throws(SettingsError) -> Void

    public init(_ check: @escaping @Sendable (Target) throws(SettingsError) -> Void) {
        self.check = check
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

    /// Seconds, as a number within `range` (refused in the words of `number`).
    public static func duration(_ text: String, _ range: ClosedRange<Duration>) throws(SettingsError) -> Duration {
        .seconds(try number(text, seconds(range.lowerBound)...seconds(range.upperBound)))
    }

    /// The one grammar of every boolean setting, of `cowatch serve` and `cowatch bridge` alike.
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

    /// A range as the docs write it: `0.5 to 3600`.
    public static func bounds(_ range: ClosedRange<Int>) -> String { "\(range.lowerBound) to \(range.upperBound)" }

    public static func bounds(_ range: ClosedRange<Double>) -> String { "\(written(range.lowerBound)) to \(written(range.upperBound))" }

    public static func bounds(_ range: ClosedRange<Duration>) -> String { "\(written(range.lowerBound)) to \(written(range.upperBound))" }

    /// A duration's seconds as a `Double`.
    public static func seconds(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        return Double(seconds) + Double(attoseconds) / 1e18
    }

    /// A number as a config file writes it: `20`, not `20.0`.
    public static func written(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }

    /// Seconds as a config file writes them, to the microsecond: `1.5`, `600`.
    public static func written(_ duration: Duration) -> String {
        written((seconds(duration) * 1e6).rounded() / 1e6)
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
