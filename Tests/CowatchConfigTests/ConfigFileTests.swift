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
}
