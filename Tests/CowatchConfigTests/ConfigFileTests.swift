import CowatchConfig
import Testing

/// The settings engine `cowatch serve` and `cowatch bridge` share
/// (Sources/CowatchConfig/): one file format, one order of sources, one set of words.
@Suite("Config files and setting sources")
struct ConfigFileTests {
    struct Target: Sendable {
        var port = 0
        var name = ""
    }

    static let keys: [SettingKey<Target>] = [
        SettingKey("port") { value, target in target.port = try SettingValue.integer(value, 0...65535) },
        SettingKey("name") { value, target in target.name = value },
    ]

    @Test("# starts a comment at a line's start or after a space, never inside quotes or a word")
    func comments() {
        #expect(ConfigFile.withoutComment("irc = irc://h/#c # the channel") == "irc = irc://h/#c ")
        #expect(ConfigFile.withoutComment("# all of it") == "")
        #expect(ConfigFile.withoutComment("channel-key = \"a #b\"") == "channel-key = \"a #b\"")
    }

    @Test("key = value lines, quotes taken off, blank lines and comments skipped, origins by line, Windows line ends read")
    func lines() throws {
        let file = try ConfigFile.parse("# top\n\nport = 7480 # the default\nname = \"Movie #1\"\r\n", path: "c.conf")
        #expect(file.top == [SettingLine(key: "port", value: "7480", origin: "c.conf:3"),
                             SettingLine(key: "name", value: "Movie #1", origin: "c.conf:4")])
    }

    @Test("sections only where the program has them, and only the ones it names")
    func sections() throws {
        let file = try ConfigFile.parse("name = a\n[pair]\nport = 1\n[pair]\nport = 2\n", path: "b.conf", sections: ["pair"])
        #expect(file.top.map(\.key) == ["name"])
        #expect(file.sections.map { $0.lines.map(\.value) } == [["1"], ["2"]])
        #expect(throws: SettingsError("b.conf:1: the only section is [pair], got [pairs]")) {
            try ConfigFile.parse("[pairs]\n", path: "b.conf", sections: ["pair"])
        }
        #expect(throws: SettingsError("s.conf:1: expected key = value")) { try ConfigFile.parse("[pair]\n", path: "s.conf") }
    }

    @Test("a later source wins; an unknown key or a bad value is refused with where it came from")
    func sources() throws {
        var target = Target()
        let lines = [SettingLine(key: "port", value: "1", origin: "c.conf:1")]
            + SettingSources.environment(["APP_PORT": "2", "APP_OTHER": "x"], keys: ["port", "name"], prefix: "APP_")
            + SettingSources.flags(["port": "3"])
        var taken: [String] = []
        try SettingSources.apply(lines, keys: Self.keys, to: &target) { taken.append($0.origin) }
        #expect(target.port == 3)
        #expect(taken == ["c.conf:1", "APP_PORT", "--port"])
        #expect(throws: SettingsError("--prt: unknown setting \"prt\" (known: port, name)")) {
            try SettingSources.apply(SettingSources.flags(["prt": "1"]), keys: Self.keys, to: &target)
        }
        #expect(throws: SettingsError("APP_PORT: expected a whole number from 0 to 65535, got \"seventy\"")) {
            try SettingSources.apply(SettingSources.environment(["APP_PORT": "seventy"], keys: ["port"], prefix: "APP_"),
                                     keys: Self.keys, to: &target)
        }
    }

    @Test("values in the same words everywhere")
    func values() throws {
        #expect(try SettingValue.integer(" 42 ", 0...100) == 42)
        #expect(try SettingValue.boolean("On"))
        #expect(SettingValue.list(" a, ,b ") == ["a", "b"])
        #expect(throws: SettingsError("expected a number from 0.5 to 2.0")) { try SettingValue.number("3", 0.5...2) }
        #expect(throws: SettingsError("expected true or false")) { try SettingValue.boolean("maybe") }
    }

    struct Timed: Sendable {
        var timeout: Duration = .milliseconds(1500)
        var verbose = false
        var store = "sqlite"
        var address = ""
    }

    static let declared: [SettingKey<Timed>] = [
        .duration("timeout", .milliseconds(100)...(.seconds(60)), \.timeout, help: "seconds a request may take"),
        .boolean("verbose", \.verbose, help: "say more", isSwitch: true),
        SettingKey("store", help: "where rooms are kept", form: "sqlite|postgres", shown: { $0.store }) { value, target in target.store = value },
        SettingKey("address", help: "where the others reach this one", form: "URL") { value, target in target.address = value },
    ]

    static let rules: [SettingRule<Timed>] = [
        SettingRule { target throws(SettingsError) in
            guard target.store != "postgres" || !target.address.isEmpty else { throw SettingsError("--store postgres needs --address") }
        },
    ]

    @Test("a declaration carries its help, form and default: --help's sentence and the docs' table come from it")
    func declarations() throws {
        #expect(Self.declared.map { $0.help(defaults: Timed()) } == [
            "Seconds a request may take (default 1.5).", "Say more (default false).",
            "Where rooms are kept (default sqlite).", "Where the others reach this one.",
        ])
        #expect(Self.declared.map(\.isSwitch) == [false, true, false, false])
        #expect(SettingTable.markdown(Self.declared, defaults: Timed()) == """
            | Key | Value | Default | Meaning |
            |---|---|---|---|
            | `timeout` | SECONDS, 0.1 to 60 | `1.5` | Seconds a request may take |
            | `verbose` | true\\|false | `false` | Say more |
            | `store` | sqlite\\|postgres | `sqlite` | Where rooms are kept |
            | `address` | URL |  | Where the others reach this one |

            """)
        #expect(SettingTable.section("t", in: "a\n<!-- begin t -->\nrows\n<!-- end t -->\n") == "rows\n")
        #expect(SettingTable.section("t", in: "no markers") == nil)
    }

    @Test("a duration is written in seconds and refused in a number's words; a boolean takes the one grammar")
    func durationsAndBooleans() throws {
        var target = Timed()
        try SettingSources.apply([SettingLine(key: "timeout", value: "0.25", origin: "t.conf:1"),
                                  SettingLine(key: "verbose", value: "yes", origin: "t.conf:2")], keys: Self.declared, to: &target)
        #expect(target.timeout == .milliseconds(250) && target.verbose)
        #expect(throws: SettingsError("--timeout: expected a number from 0.1 to 60.0, got \"0.05\"")) {
            try SettingSources.apply(SettingSources.flags(["timeout": "0.05"]), keys: Self.declared, to: &target)
        }
        #expect(SettingValue.written(Duration.seconds(600)) == "600")
        #expect(SettingValue.written(Duration.milliseconds(300)) == "0.3")
        #expect(SettingValue.written(20.0) == "20" && SettingValue.written(0.5) == "0.5")
    }

    @Test("checks across settings run after every source, the first refusal stopping")
    func rules() throws {
        var target = Timed()
        try SettingSources.check(target, rules: Self.rules)
        target.store = "postgres"
        #expect(throws: SettingsError("--store postgres needs --address")) { try SettingSources.check(target, rules: Self.rules) }
        target.address = "ws://10.0.0.2:7480"
        try SettingSources.check(target, rules: Self.rules)
    }
}
