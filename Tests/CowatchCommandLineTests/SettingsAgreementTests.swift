import ArgumentParser
import CowatchBridge
import CowatchConfig
import CowatchSettings
import Foundation
import Testing
@testable import cowatch

/// What the tests of both programs read: the repository's files and what an
/// example config file says of each key.
enum Repository {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOfFile: root.appendingPathComponent(path).path, encoding: .utf8)
    }

    /// Each `key = value` of an example file, commented out (`# key = value`) or not.
    static func exampleLines(_ text: String) -> [(key: String, value: String)] {
        text.split(separator: "\n").compactMap { raw in
            var line = Substring(raw)
            if line.hasPrefix("# ") { line = line.dropFirst(2) }
            guard line.contains(" = ") else { return nil }
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2, let key = parts.first, !key.isEmpty,
                  key.allSatisfy({ $0.isLowercase || $0.isNumber || $0 == "-" }) else { return nil }
            return (key, String(ConfigFile.withoutComment(Substring(parts[1]))).trimmingCharacters(in: .whitespaces))
        }
    }

    /// A help text's words with the lines and columns its wrapping made undone.
    static func unwrapped(_ help: String) -> String {
        help.split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }

    /// The `--name`s a command's help lists.
    static func options(inHelp help: String) -> Set<String> {
        var names: Set<String> = []
        var rest = Substring(help)
        while let range = rest.range(of: "--") {
            let name = rest[range.upperBound...].prefix { $0.isLowercase || $0.isNumber || $0 == "-" }
            if !name.isEmpty { names.insert(String(name)) }
            rest = rest[range.upperBound...]
        }
        return names
    }
}

@Suite("Serve settings: the command line, the config file, the example and docs/settings.md agree with the declarations")
struct ServeSettingsAgreementTests {
    static let declarations = ServeSettings.declarations
    static let defaults = ServeSettings()

    @Test("every declared key is an option of cowatch serve, which hands its value to the settings under that key")
    func commandLine() throws {
        for key in Self.declarations {
            let command = try ServeCommand.parse(key.isSwitch ? ["--\(key.name)"] : ["--\(key.name)", "value"])
            #expect(command.flags == [key.name: key.isSwitch ? "true" : "value"], "--\(key.name)")
        }
    }

    @Test("cowatch serve has no option that is not declared, and each says its declaration's words")
    func help() {
        let help = Repository.unwrapped(ServeCommand.helpMessage(columns: 80))
        let names = Set(Self.declarations.map(\.name))
        #expect(Repository.options(inHelp: help).subtracting(names) == ["help"])
        for key in Self.declarations {
            #expect(help.contains("--\(key.name)" + (key.isSwitch ? " " : " \(key.form) ") + key.help(defaults: Self.defaults)),
                    "--\(key.name)")
        }
    }

    @Test("every default a declaration shows is taken back by the config file and the environment")
    func configFile() throws {
        let shown = Self.declarations.compactMap { key in key.shown(Self.defaults).map { (key.name, $0) } }
        #expect(shown.count > 50)
        let path = NSTemporaryDirectory() + "cowatch-defaults-\(UUID().uuidString).conf"
        try shown.map { "\($0.0) = \($0.1)" }.joined(separator: "\n").write(toFile: path, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let fromFile = try ServeSettings.resolve(flags: ["config": path], environment: [:])
        let environment = Dictionary(uniqueKeysWithValues: shown.map { (ServeSettings.environmentName($0.0), $0.1) })
        let fromEnvironment = try ServeSettings.resolve(flags: [:], environment: environment)
        for key in Self.declarations {
            #expect(key.shown(fromFile) == key.shown(Self.defaults), "\(key.name) from the file")
            #expect(key.shown(fromEnvironment) == key.shown(Self.defaults), "\(key.name) from the environment")
        }
    }

    @Test("deploy/cowatch.conf.example shows every key with its default, and only declared keys", arguments: [
        "deploy/cowatch.conf.example", "deploy/cluster/cluster.conf.example",
    ])
    func example(path: String) throws {
        let lines = Repository.exampleLines(try Repository.text(path))
        let names = Set(Self.declarations.map(\.name))
        for line in lines { #expect(names.contains(line.key), "\(path): \(line.key) is not a setting") }
        guard path == "deploy/cowatch.conf.example" else { return }
        for key in Self.declarations where key.name != "config" {
            let shown = lines.filter { $0.key == key.name }.map(\.value)
            #expect(!shown.isEmpty, "\(key.name) is missing from \(path)")
            if let value = key.shown(Self.defaults) { #expect(shown.contains(value), "\(path): \(key.name) shows \(shown), not \(value)") }
        }
    }

    @Test("docs/settings.md's table of cowatch serve is the declarations'")
    func docs() throws {
        let expected = SettingTable.markdown(Self.declarations, defaults: Self.defaults)
        let section = SettingTable.section("serve", in: try Repository.text("docs/settings.md"))
        if section != expected { try? expected.write(toFile: NSTemporaryDirectory() + "serve-settings.md", atomically: true, encoding: .utf8) }
        #expect(section == expected, "written to \(NSTemporaryDirectory())serve-settings.md")
    }
}

@Suite("Bridge settings: the command line, the config file, the example and docs/settings.md agree with the declarations")
struct BridgeSettingsAgreementTests {
    static let declarations = BridgeSettings.declarations
    static let defaults = BridgeSettings.defaults

    @Test("every declared key is an option (irc: the argument) of cowatch bridge, which hands its value on under that key")
    func commandLine() throws {
        for key in Self.declarations {
            let command = try BridgeCommand.parse(key.name == "irc" ? ["value"] : ["--\(key.name)", "value"])
            #expect(command.flags == [key.name: "value"], "--\(key.name)")
        }
        #expect(try BridgeCommand.parse(["--config", "bridge.conf"]).flags.isEmpty)
    }

    @Test("cowatch bridge has no option that is not declared, and each says its declaration's words")
    func help() {
        let help = Repository.unwrapped(BridgeCommand.helpMessage(columns: 80))
        let names = Set(Self.declarations.map(\.name))
        // --config names the file itself; the example's own words are in the discussion.
        #expect(Repository.options(inHelp: help).subtracting(names) == ["help", "config"])
        for key in Self.declarations {
            #expect(help.contains(key.help(defaults: Self.defaults)), "--\(key.name)")
        }
    }

    @Test("every default a declaration shows is taken back by the config file")
    func configFile() throws {
        let shown = Self.declarations.compactMap { key in key.shown(Self.defaults).map { "\(key.name) = \($0)" } }
        #expect(shown.count > 30)
        let text = shown.joined(separator: "\n") + "\n[pair]\nirc = irc://irc.example.net/#c\nroom = r\n"
        let settings = try BridgeSettings.resolve(file: ("defaults.conf", text), environment: [:], flags: [:])
        let expected = try BridgeSettings.resolve(file: ("bare.conf", "[pair]\nirc = irc://irc.example.net/#c\nroom = r\n"),
                                                  environment: [:], flags: [:])
        // Alike but for where each pair was defined.
        #expect(settings.pairs.map { var pair = $0; pair.origin = ""; return pair } == expected.pairs.map { var pair = $0; pair.origin = ""; return pair })
        #expect(settings.logLevel == expected.logLevel)
    }

    @Test("deploy/bridge.conf.example shows every key with its default, and only declared keys")
    func example() throws {
        let path = "deploy/bridge.conf.example"
        let lines = Repository.exampleLines(try Repository.text(path))
        let names = Set(Self.declarations.map(\.name))
        for line in lines { #expect(names.contains(line.key), "\(path): \(line.key) is not a setting") }
        for key in Self.declarations {
            let shown = lines.filter { $0.key == key.name }.map(\.value)
            #expect(!shown.isEmpty, "\(key.name) is missing from \(path)")
            if let value = key.shown(Self.defaults) { #expect(shown.contains(value), "\(path): \(key.name) shows \(shown), not \(value)") }
        }
    }

    @Test("docs/settings.md's table of cowatch bridge is the declarations'")
    func docs() throws {
        let expected = SettingTable.markdown(Self.declarations, defaults: Self.defaults)
        let section = SettingTable.section("bridge", in: try Repository.text("docs/settings.md"))
        if section != expected { try? expected.write(toFile: NSTemporaryDirectory() + "bridge-settings.md", atomically: true, encoding: .utf8) }
        #expect(section == expected, "written to \(NSTemporaryDirectory())bridge-settings.md")
    }
}

@Suite("A command's options, read from the settings' declarations")
struct SettingOptionsTests {
    @Test("--KEY VALUE, --KEY=VALUE and a switch alone; the last of a key given twice wins")
    func forms() throws {
        let flags = try ServeCommand.options.parse(["--port", "0", "--host=::1", "--echo", "--port", "7", "--permessage-deflate=false"])
        #expect(flags == ["port": "7", "host": "::1", "echo": "true", "permessage-deflate": "false"])
    }

    @Test("an unknown key, a missing value and a stray argument are refused in words")
    func refusals() {
        #expect(throws: ValidationError.self) { try ServeCommand.options.parse(["--prot", "0"]) }
        #expect((try? ServeCommand.options.parse(["--prot", "0"])) == nil)
        #expect(throws: ValidationError.self) { try ServeCommand.options.parse(["--port"]) }
        #expect(throws: ValidationError.self) { try ServeCommand.options.parse(["--port", "--host", "x"]) }
        #expect(throws: ValidationError.self) { try ServeCommand.options.parse(["7480"]) }
        #expect(throws: ValidationError.self) { try BridgeCommand.options.parse(["irc://a/#b", "irc://c/#d"]) }
    }

    @Test("a misspelt key is answered with the key meant")
    func suggestion() {
        #expect(SettingOptions<ServeSettings>.distance("kitten", "sitting") == 3)
        #expect(SettingOptions<ServeSettings>.distance("", "port") == 4 && SettingOptions<ServeSettings>.distance("port", "port") == 0)
        #expect((try? ServeCommand.options.parse(["--zzzzzz", "1"])) == nil)
        do {
            _ = try ServeCommand.options.parse(["--max-room", "3"])
            Issue.record("taken")
        } catch let error as ValidationError {
            #expect(error.message == "unknown option '--max-room' (did you mean '--max-rooms'?)")
        } catch {
            Issue.record("\(error)")
        }
    }

    @Test("the bridge's channel is its bare argument, and --config is its own option, no setting")
    func bridge() throws {
        let command = try BridgeCommand.parse(["irc://irc.example.net/#movies", "--room", "movies", "--config", "b.conf"])
        #expect(command.flags == ["irc": "irc://irc.example.net/#movies", "room": "movies"])
        #expect(command.config == "b.conf")
    }
}

@Suite("The docs' prose says the defaults the declarations have")
struct SettingDefaultsInProseTests {
    /// Every setting's default as a number (seconds for a length of time), by key.
    static var defaults: [String: Double] {
        var found: [String: Double] = [:]
        for key in ServeSettings.declarations {
            if let shown = key.shown(ServeSettings()), let value = Double(shown) { found[key.name] = value }
        }
        for key in BridgeSettings.declarations where found[key.name] == nil {
            if let shown = key.shown(BridgeSettings.defaults), let value = Double(shown) { found[key.name] = value }
        }
        return found
    }

    static let units: [String: Double] = ["ms": 0.001, "s": 1, "second": 1, "seconds": 1, "minute": 60, "minutes": 60,
                                          "hour": 3600, "hours": 3600, "day": 86_400, "days": 86_400,
                                          "KiB": 1024, "MiB": 1_048_576, "GiB": 1_073_741_824]

    /// "`KEY` ... N [unit] by default", "`KEY` ... (default N [unit]" and "`KEY`, N [unit] unless set",
    /// within one clause of the key.
    static var claim: Regex<(Substring, key: Substring, a: Substring?, ua: Substring?, b: Substring?, ub: Substring?)> { #/`(?<key>[a-z]+(?:-[a-z]+)+)`[^`;.]{0,50}?(?:\(default (?<a>[0-9][0-9,]*(?:\.[0-9]+)?)(?: (?<ua>[A-Za-z]+))?|(?<b>[0-9][0-9,]*(?:\.[0-9]+)?)(?: (?<ub>[A-Za-z]+))? (?:by default|unless set))/# }

    @Test("a default the prose gives a setting is the declared one")
    func prose() throws {
        let documents = ["README.md", "deploy/README.md"] + (try FileManager.default.contentsOfDirectory(
            atPath: Repository.root.appendingPathComponent("docs").path).filter { $0.hasSuffix(".md") }.map { "docs/" + $0 })
        let defaults = Self.defaults
        var checked = 0
        var wrong: [String] = []
        for path in documents {
            // Benchmarks record the settings of their day.
            guard path != "docs/benchmarks.md" else { continue }
            let text = try Repository.text(path).split(separator: "\n").joined(separator: " ")
            for match in text.matches(of: Self.claim) {
                let key = String(match.output.key)
                guard let declared = defaults[key], let number = match.output.a ?? match.output.b,
                      let value = Double(number.filter { $0 != "," }) else { continue }
                let unit = (match.output.ua ?? match.output.ub).map(String.init)
                let scale = unit.flatMap { Self.units[$0] } ?? 1
                checked += 1
                if abs(value * scale - declared) > 1e-9 {
                    wrong.append("\(path): `\(key)` said \(number)\(unit.map { " " + $0 } ?? ""), declared \(declared)")
                }
            }
        }
        #expect(checked >= 5, "the pattern finds the prose's defaults")
        #expect(wrong.isEmpty, "\(wrong.joined(separator: "\n"))")
    }
}
