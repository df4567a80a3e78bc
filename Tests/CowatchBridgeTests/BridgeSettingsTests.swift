@testable import CowatchBridge
import CowatchConfig
import CowatchTime
import Foundation
import Testing

@Suite("Bridge settings")
struct BridgeSettingsTests {
    @Test("irc:// and ircs:// addresses")
    func addresses() {
        func parts(_ text: String) -> String? {
            IRCAddress(text).map { "\($0.host) \($0.port) \($0.tls ? "tls" : "plain") \($0.channel)" }
        }
        #expect(parts("irc://irc.example.net/#movies") == "irc.example.net 6667 plain #movies")
        #expect(parts("ircs://irc.example.net:7000/movies") == "irc.example.net 7000 tls #movies")
        #expect(parts("ircs://irc.example.net/%23movies") == "irc.example.net 6697 tls #movies")
        #expect(parts("irc://[::1]:6668/#c") == "::1 6668 plain #c")
        #expect(parts("http://irc.example.net/#c") == nil)
        #expect(parts("irc://irc.example.net") == nil)
        #expect(parts("irc://irc.example.net/#a,b") == nil)
        #expect(parts("irc://irc.example.net:0/#c") == nil)
    }

    @Test("one pair from the command line, with the defaults")
    func commandLine() throws {
        let settings = try BridgeSettings.resolve(file: nil, environment: [:],
                                                  flags: ["irc": "irc://irc.example.net/#movies", "room": "Movies"])
        let pair = try #require(settings.pairs.first)
        #expect(settings.pairs.count == 1)
        #expect(pair.room == "movies")
        #expect(pair.roomAddress?.path == "/rooms/movies")
        #expect(pair.relay.link == "http://127.0.0.1:7480/rooms/movies")
        #expect(pair.relay.prefix == "!")
        #expect(pair.relay.network == "irc.example.net")
        #expect(pair.connection.nick == "cowatch")
        #expect(pair.connection.pacing == PacerSettings(perSecond: 0.5, burst: 5, maximumQueued: 100))
        #expect(pair.relay.speakerPacing == PacerSettings(perSecond: 10, burst: 20, maximumQueued: 250))
        #expect(pair.ownerKeyDirectory == "data/bridge")
    }

    @Test("the owner key's directory: systemd's STATE_DIRECTORY unless set, then the setting")
    func ownerKeyDirectory() throws {
        let flags = ["irc": "irc://irc.example.net/#movies", "room": "movies"]
        let systemd = try BridgeSettings.resolve(file: nil, environment: ["STATE_DIRECTORY": "/var/lib/cowatch-bridge:/var/lib/other"], flags: flags)
        #expect(systemd.pairs.first?.ownerKeyDirectory == "/var/lib/cowatch-bridge")
        let set = try BridgeSettings.resolve(file: nil, environment: ["STATE_DIRECTORY": "/var/lib/cowatch-bridge"],
                                             flags: flags.merging(["owner-key-directory": "/srv/keys"]) { $1 })
        #expect(set.pairs.first?.ownerKeyDirectory == "/srv/keys")
        #expect(throws: SettingsError.self) {
            _ = try BridgeSettings.resolve(file: nil, environment: [:], flags: flags.merging(["owner-key-directory": ""]) { $1 })
        }
    }

    @Test("a founded room's owner key is written for the bridge's user alone, and again over an older one")
    func ownerKeyFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cowatch-owner-key-\(UInt32.random(in: 0...UInt32.max))").path
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let keys = directory + "/keys"
        let first = OwnerKeyFile.write("k-1", room: "movies", link: "http://watch.test/rooms/movies", directory: keys)
        #expect(first == .success(keys + "/movies.owner-key"))
        let text = try String(contentsOfFile: keys + "/movies.owner-key", encoding: .utf8)
        #expect(text.split(separator: "\n").contains("k-1"))
        #expect(text.contains("http://watch.test/rooms/movies?owner=KEY"))
        #expect(text.contains("--owner KEY"))
        let fileMode = try FileManager.default.attributesOfItem(atPath: keys + "/movies.owner-key")[.posixPermissions] as? Int
        #expect(fileMode == 0o600)
        let directoryMode = try FileManager.default.attributesOfItem(atPath: keys)[.posixPermissions] as? Int
        #expect(directoryMode == 0o700)
        _ = OwnerKeyFile.write("k-2", room: "movies", link: "http://watch.test/rooms/movies", directory: keys)
        let again = try String(contentsOfFile: keys + "/movies.owner-key", encoding: .utf8)
        #expect(again.split(separator: "\n").contains("k-2") && !again.contains("k-1"))
        // A directory that cannot be made is said in words, for the log to keep the key instead.
        try "x".write(toFile: directory + "/plain", atomically: true, encoding: .utf8)
        guard case .failure(let problem) = OwnerKeyFile.write("k-3", room: "movies", link: "l", directory: directory + "/plain/keys") else {
            Issue.record("a directory under a file was made")
            return
        }
        #expect(problem.message.contains("could not be made"))
    }

    @Test("a config file: settings for every pair first, then [pair] sections; flags win over the file's settings")
    func file() throws {
        let text = """
        # bridge.conf
        server = ws://127.0.0.1:7481   # the server beside us
        public-url = https://watch.example.org/
        nick = watchbot
        prefix = !

        [pair]
        irc = irc://irc.example.net/#movies
        room = movies

        [pair]
        irc = ircs://irc.example.net/#anime
        room = anime
        prefix = ?
        """
        let settings = try BridgeSettings.resolve(file: ("bridge.conf", text), environment: ["COWATCH_BRIDGE_NICK": "envbot"],
                                                  flags: ["max-speakers": "7"])
        #expect(settings.pairs.map(\.room) == ["movies", "anime"])
        #expect(settings.pairs.map(\.irc.channel) == ["#movies", "#anime"])
        #expect(settings.pairs.map(\.relay.prefix) == ["!", "?"])
        #expect(settings.pairs.allSatisfy { $0.connection.nick == "envbot" && $0.relay.maximumSpeakers == 7 })
        #expect(settings.pairs[0].relay.link == "https://watch.example.org/rooms/movies")
        #expect(settings.pairs[1].roomAddress?.port == 7481)
        // Different TLS settings: two connections; the same server and nick would share one.
        let plan = BridgePlan(settings)
        #expect(plan.networks.count == 2)
        #expect(plan.pairs.map(\.network) == [0, 1])
    }

    @Test("times are written in seconds, fractions allowed, and kept as such; the defaults too")
    func times() throws {
        let flags = ["irc": "irc://irc.example.net/#movies", "room": "movies"]
        let defaults = try #require(try BridgeSettings.resolve(file: nil, environment: [:], flags: flags).pairs.first)
        #expect(defaults.connection.keepalive == .seconds(90))
        #expect(defaults.connection.connectTimeout == .seconds(20))
        #expect(defaults.relay.speakerIdle == .seconds(3600))
        #expect(defaults.relay.keptOutRetry == .seconds(600))
        #expect(defaults.relay.resumeGrace == .seconds(60))
        let text = "irc-keepalive = 45.5\nspeaker-idle = 90\nkept-out-retry = 2.25\nresume-grace = 0\nconnect-timeout = 7\n"
        let settings = try BridgeSettings.resolve(file: ("bridge.conf", text), environment: [:], flags: flags)
        let set = try #require(settings.pairs.first)
        #expect(set.connection.keepalive == .milliseconds(45_500))
        #expect(set.relay.speakerIdle == .seconds(90))
        #expect(set.relay.keptOutRetry == .milliseconds(2_250))
        #expect(set.relay.resumeGrace == .zero)
        #expect(set.connection.connectTimeout == .seconds(7))
        // The room side's connections are given the longest connect timeout asked for.
        #expect(BridgePlan(settings).connectTimeout == .seconds(7))
    }

    @Test("pairs on one server with one nick share a connection")
    func shared() throws {
        let text = """
        [pair]
        irc = irc://irc.example.net/#a
        room = a
        [pair]
        irc = irc://irc.example.net/#b
        room = b
        """
        let plan = BridgePlan(try BridgeSettings.resolve(file: ("f", text), environment: [:], flags: [:]))
        #expect(plan.networks.count == 1)
        #expect(plan.pairs.map(\.network) == [0, 0])
    }

    @Test("mistakes are named with where they are")
    func mistakes() {
        func problem(_ text: String, flags: [String: String] = [:]) -> String {
            do {
                _ = try BridgeSettings.resolve(file: ("bridge.conf", text), environment: [:], flags: flags)
                return "accepted"
            } catch {
                return error.message
            }
        }
        #expect(problem("colour = red\n[pair]\nirc = irc://h/#c\nroom = r").hasPrefix("bridge.conf:1: unknown setting \"colour\""))
        #expect(problem("[pair]\nirc = irc://h/#c\nroom = r\nirc-burst = lots")
                == "bridge.conf:4: expected a whole number from 1 to 100, got \"lots\"")
        #expect(problem("irc = irc://h/#c\n") == "bridge.conf:1: irc belongs in a [pair] section")
        #expect(problem("[pair]\nroom = r") == "bridge.conf:1: no irc = irc://HOST/#channel")
        #expect(problem("[channel]") == "bridge.conf:1: the only section is [pair], got [channel]")
        #expect(problem("").hasPrefix("nothing to bridge"))
        #expect(problem("[pair]\nirc = irc://h/#c\nroom = r\n[pair]\nirc = irc://h/#C\nroom = s").contains("is bridged twice"))
        #expect(problem("", flags: ["irc": "irc://h/#c", "room": "r", "server": "wss://h/rooms/r"]).hasPrefix("--server: expected ws://HOST:PORT"))
        #expect(problem("", flags: ["irc": "irc://h/#c", "room": "r", "server": "ftp://h"]).hasPrefix("--server: expected ws://HOST:PORT"))
        #expect(problem("", flags: ["irc": "irc://h/#c", "room": "r", "server": "wss://h", "server-ca-file": "/nonexistent.pem"])
                .contains("server-ca-file: cannot read /nonexistent.pem"))
        #expect(problem("", flags: ["irc": "irc://h/#c", "room": "r", "nick": "9lives"]).hasPrefix("--nick: expected a nick"))
        #expect(problem("", flags: ["irc": "irc://h/#c", "room": "r", "prefix": "/"]).hasPrefix("--prefix: expected 1 to 8 characters"))
    }

    @Test("a server behind TLS: wss:// or its https:// address, the room's link on https, a private CA trusted")
    func serverOverTLS() throws {
        let settings = try BridgeSettings.resolve(file: nil, environment: [:], flags: [
            "irc": "irc://h/#c", "room": "r", "server": "https://watch.example.org/", "server-ca-file": "/etc/ssl/certs/ca-certificates.crt",
        ])
        let pair = try #require(settings.pairs.first)
        #expect(pair.server == "wss://watch.example.org")
        #expect(pair.roomAddress?.secure == true && pair.roomAddress?.port == 443 && pair.roomAddress?.path == "/rooms/r")
        #expect(pair.relay.link == "https://watch.example.org/rooms/r")
        #expect(BridgePlan(settings).trust.caFiles == ["/etc/ssl/certs/ca-certificates.crt"])
    }

    @Test("# starts a comment only at the start of a line or after a space: a channel and a quoted name keep theirs")
    func comments() throws {
        let settings = try BridgeSettings.resolve(
            file: ("b.conf", "[pair]\nirc = irc://h/#c # the channel\nroom = r\nirc-realname = \"Cowatch #1 # of 2\"\n"), environment: [:], flags: [:])
        #expect(settings.pairs.first?.irc.channel == "#c")
        #expect(settings.pairs.first?.connection.realName == "Cowatch #1 # of 2")
    }

    @Test("deploy/bridge.conf.example shows every setting, has no active pair (nothing to bridge until one is made), and its first pair uncommented is a valid config")
    func example() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let path = root.appendingPathComponent("deploy/bridge.conf.example").path
        let text = try String(contentsOfFile: path, encoding: .utf8)
        for key in BridgeSettings.keyNames {
            #expect(text.contains("\n# \(key) = ") || text.contains("\n\(key) = "), "\(key) is missing from \(path)")
        }
        // Installed as it is, it joins nothing: a host makes a pair of their own first.
        #expect(!text.contains("\n[pair]"))
        #expect(throws: SettingsError.self) { try BridgeSettings.resolve(file: (path, text), environment: [:], flags: [:]) }
        let firstPair = text.replacingOccurrences(of: "# [pair]\n# irc = ircs://irc.libera.chat/#my-movie-night\n# room = movie-night",
                                                  with: "[pair]\nirc = ircs://irc.libera.chat/#my-movie-night\nroom = movie-night")
        #expect(firstPair != text)
        let settings = try BridgeSettings.resolve(file: (path, firstPair), environment: [:], flags: [:])
        #expect(settings.pairs.map(\.room) == ["movie-night"])
    }
}
