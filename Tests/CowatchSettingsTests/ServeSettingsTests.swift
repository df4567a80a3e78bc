import CowatchConfig
import CowatchGateway
import CowatchSettings
import Foundation
import Testing

@Suite("Serve settings: flags, environment, config file")
struct ServeSettingsTests {
    static func configFile(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "cowatch-\(UUID().uuidString).conf"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    @Test("with nothing set, the defaults: loopback, port 7480, SQLite in ./data")
    func defaults() throws {
        let settings = try ServeSettings.resolve(flags: [:], environment: [:])
        #expect(settings.gateway.host == "127.0.0.1")
        #expect(settings.gateway.port == 7480)
        #expect(settings.store == .sqlite)
        #expect(settings.dataDirectory == "./data")
    }

    @Test("a cluster node's derived defaults: its name from the machine and port, its address on loopback, renewals at a quarter of the lease")
    func clusterDefaults() throws {
        let settings = try ServeSettings.resolve(flags: ["port": "7481", "lease-seconds": "2"], environment: [:])
        #expect(settings.node(hostName: "web 1.example!") == "web1.example-7481")
        #expect(settings.advertise == "ws://127.0.0.1:7481")
        #expect(settings.leaseRenewal == .milliseconds(500))
        let named = try ServeSettings.resolve(flags: ["node-id": "n2", "advertise-url": "ws://10.0.0.2:7480"], environment: [:])
        #expect(named.node(hostName: "ignored") == "n2")
        #expect(named.advertise == "ws://10.0.0.2:7480")
    }

    @Test("flags win over the environment, which wins over the config file")
    func precedence() throws {
        let path = try Self.configFile("""
            # a comment
            port = 9000
            max-rooms = 5
            data-dir = "/srv/cowatch"   # trailing comment
            """)
        let settings = try ServeSettings.resolve(
            flags: ["port": "9002", "config": path],
            environment: ["COWATCH_PORT": "9001", "COWATCH_MAX_ROOMS": "7", "HOME": "/root"])
        #expect(settings.gateway.port == 9002)
        #expect(settings.gateway.maximumRooms == 7)
        #expect(settings.dataDirectory == "/srv/cowatch")
        #expect(settings.origins["port"] == "--port")
        #expect(settings.origins["max-rooms"] == "COWATCH_MAX_ROOMS")
    }

    @Test("the config file can be named by COWATCH_CONFIG")
    func configFromEnvironment() throws {
        let path = try Self.configFile("store = memory\nall-interfaces = true\n")
        let settings = try ServeSettings.resolve(flags: [:], environment: ["COWATCH_CONFIG": path])
        #expect(settings.store == .memory)
        #expect(settings.gateway.host == "0.0.0.0")
    }

    @Test("a bad value is refused with where it came from and what is expected", arguments: [
        (["port": "http"], "--port: expected a whole number from 0 to 65535, got \"http\""),
        (["store": "mysql"], "--store: expected sqlite, memory or postgres, got \"mysql\""),
        (["database-url": "mysql://db/cowatch"], "--database-url: expected postgres://USER[:PASSWORD]@HOST[:PORT]/DATABASE, got \"mysql://db/cowatch\""),
        (["node-id": "node one"], "--node-id: expected 1 to 64 letters, digits, '-', '_' or '.', got \"node one\""),
        (["log-level": "loud"], "--log-level: expected one of"),
        (["password-hash-cost": "1000"], "--password-hash-cost: the scrypt cost must be a power of two from 2 to 131072, got \"1000\""),
        (["password-hash-cost": "262144"], "--password-hash-cost: expected a whole number from 2 to 131072"),
        (["password-hash-block-size": "32"], "--password-hash-block-size: expected a whole number from 1 to 16"),
        (["password-hash-parallelism": "0"], "--password-hash-parallelism: expected a whole number from 1 to 16"),
        (["youtube-api-url": "javascript:alert(1)"], "--youtube-api-url: expected an address such as https://www.youtube.com/iframe_api"),
        (["youtube-api-url": "https://www.youtube.com"], "--youtube-api-url: expected an address such as"),
        (["vimeo-api-url": "https://user@player.vimeo.com/api/player.js"], "--vimeo-api-url: expected an address such as"),
        (["vimeo-api-url": "https://player.vimeo.com/api/player.js; script-src *"], "--vimeo-api-url: the address may hold only letters"),
        (["youtube-api-url": "https://x.test:99999/iframe_api"], "--youtube-api-url: expected an address such as"),
    ])
    func badFlag(flags: [String: String], message: String) {
        #expect {
            _ = try ServeSettings.resolve(flags: flags, environment: [:])
        } throws: { error in
            "\(error)".hasPrefix(message)
        }
    }

    @Test("scrypt's parameters for room passwords come from the settings like every limit")
    func passwordHashing() throws {
        let defaults = try ServeSettings.resolve(flags: [:], environment: [:]).gateway.room.passwordHashing
        #expect((defaults.cost, defaults.blockSize, defaults.parallelism) == (1024, 8, 1))
        let path = try Self.configFile("password-hash-block-size = 4\n")
        let settings = try ServeSettings.resolve(flags: ["password-hash-cost": "4096", "config": path],
                                                 environment: ["COWATCH_PASSWORD_HASH_PARALLELISM": "2"])
        let hashing = settings.gateway.room.passwordHashing
        #expect((hashing.cost, hashing.blockSize, hashing.parallelism) == (4096, 4, 2))
    }

    @Test("the players' API scripts: YouTube's and Vimeo's by default, another address from the settings, and the policy names exactly their origins")
    func playerScripts() throws {
        let defaults = try ServeSettings.resolve(flags: [:], environment: [:])
        #expect(defaults.gateway.playerScripts.urls["youtube"] == "https://www.youtube.com/iframe_api")
        #expect(defaults.gateway.playerScripts.urls["vimeo"] == "https://player.vimeo.com/api/player.js")
        #expect(defaults.gateway.playerScripts.origins == ["https://player.vimeo.com", "https://www.youtube.com"])

        let path = try Self.configFile("vimeo-api-url = http://127.0.0.1:7601/api/player.js\n")
        let settings = try ServeSettings.resolve(
            flags: ["youtube-api-url": "http://127.0.0.1:7600/iframe_api", "config": path], environment: [:])
        #expect(settings.gateway.playerScripts.origins == ["http://127.0.0.1:7601", "http://127.0.0.1:7600"])
        let policy = settings.gateway.playerScripts.contentSecurityPolicy
        #expect(policy.contains("script-src 'self' http://127.0.0.1:7601 http://127.0.0.1:7600;"))
        #expect(policy.contains("frame-src http://127.0.0.1:7601 http://127.0.0.1:7600;"))
        #expect(!policy.contains("youtube.com") && !policy.contains("vimeo.com"))
    }

    @Test("a bad environment value names the variable")
    func badEnvironment() {
        #expect {
            _ = try ServeSettings.resolve(flags: [:], environment: ["COWATCH_MAX_MEMBERS": "-3"])
        } throws: { error in
            "\(error)".hasPrefix("COWATCH_MAX_MEMBERS: expected a whole number")
        }
    }

    @Test("an unknown key or a malformed line in the config file names the line")
    func badConfigFile() throws {
        let unknown = try Self.configFile("port = 7480\nprot = 1\n")
        #expect {
            _ = try ServeSettings.resolve(flags: ["config": unknown], environment: [:])
        } throws: { error in
            "\(error)".contains(":2 (prot): unknown setting \"prot\"")
        }
        let malformed = try Self.configFile("port 7480\n")
        #expect {
            _ = try ServeSettings.resolve(flags: ["config": malformed], environment: [:])
        } throws: { error in
            "\(error)".contains(":1: expected key = value")
        }
        #expect(throws: SettingsError.self) {
            _ = try ServeSettings.resolve(flags: ["config": "/nonexistent/cowatch.conf"], environment: [:])
        }
    }

    @Test("a # inside a value is the value's, as in the bridge's config: only a # at a line's start or after a space is a comment")
    func hashInValue() throws {
        let tokenFile = NSTemporaryDirectory() + "cowatch-token#\(UUID().uuidString)"
        try "operator-secret-0123456789\n".write(toFile: tokenFile, atomically: true, encoding: .utf8)
        let path = try Self.configFile("admin-token-file = \(tokenFile) # kept out of the command line\n")
        let settings = try ServeSettings.resolve(flags: ["config": path], environment: [:])
        #expect(settings.gateway.adminToken == "operator-secret-0123456789")
    }

    @Test("a cluster node without its database, or without an address the other nodes can reach, is refused when the settings are read", arguments: [
        (["store": "postgres"], "--store postgres needs --database-url postgres://USER@HOST/DATABASE"),
        (["store": "postgres", "database-url": "postgres://cowatch@db/cowatch", "port": "0"],
         "--store postgres needs --advertise-url, or a --port other than 0"),
    ])
    func clusterNode(flags: [String: String], message: String) {
        #expect {
            _ = try ServeSettings.resolve(flags: flags, environment: [:])
        } throws: { error in
            "\(error)" == message
        }
    }

    @Test("a cluster node with its database and an address to be reached at is taken, from any source")
    func clusterNodeTaken() throws {
        let path = try Self.configFile("store = postgres\nport = 0\n")
        let settings = try ServeSettings.resolve(
            flags: ["config": path, "advertise-url": "ws://10.0.0.2:7480"],
            environment: ["COWATCH_DATABASE_URL": "postgres://cowatch@db/cowatch"])
        #expect(settings.store == .postgres && settings.advertiseURL == "ws://10.0.0.2:7480")
        _ = try ServeSettings.resolve(flags: ["store": "postgres", "database-url": "postgres://cowatch@db/cowatch"], environment: [:])
    }

    @Test("lengths of time are Durations, written in seconds and refused in the words of any number")
    func durations() throws {
        let settings = try ServeSettings.resolve(
            flags: ["lease-seconds": "0.3", "close-timeout": "2.5", "resume-grace": "90", "http-request-timeout": "20"], environment: [:])
        #expect(settings.lease == .milliseconds(300))
        #expect(settings.gateway.closeReplyTimeout == .milliseconds(2500))
        #expect(settings.gateway.room.resumeGrace.milliseconds == 90_000)
        #expect(settings.gateway.httpRequestTimeout == .seconds(20))
        let defaults = try ServeSettings.resolve(flags: [:], environment: [:])
        #expect(defaults.lease == .milliseconds(1500) && defaults.databaseHold == .seconds(90))
        #expect(defaults.gateway.idleTimeout == .seconds(35) && defaults.gateway.shutdownGrace == .seconds(3))
        for (flags, message) in [
            (["close-timeout": "0.05"], "--close-timeout: expected a number from 0.1 to 600.0, got \"0.05\""),
            (["lease-seconds": "61"], "--lease-seconds: expected a number from 0.3 to 60.0, got \"61\""),
            (["http-request-timeout": "1.5"], "--http-request-timeout: expected a whole number from 1 to 3600, got \"1.5\""),
        ] {
            #expect {
                _ = try ServeSettings.resolve(flags: flags, environment: [:])
            } throws: { error in
                "\(error)" == message
            }
        }
    }

    @Test("send threads: auto by default and as a word, a count from 0 to 64, nothing else")
    func sendThreads() throws {
        #expect(try ServeSettings.resolve(flags: [:], environment: [:]).gateway.sendThreads == nil)
        #expect(try ServeSettings.resolve(flags: ["send-threads": "AUTO"], environment: [:]).gateway.sendThreads == nil)
        #expect(try ServeSettings.resolve(flags: ["send-threads": "0"], environment: [:]).gateway.sendThreads == 0)
        #expect(try ServeSettings.resolve(flags: [:], environment: ["COWATCH_SEND_THREADS": "3"]).gateway.sendThreads == 3)
        for wrong in ["65", "-1", "some"] {
            #expect(throws: SettingsError.self) { _ = try ServeSettings.resolve(flags: ["send-threads": wrong], environment: [:]) }
        }
    }

    @Test("every boolean, a switch on the command line or not, takes the one grammar in a file", arguments: ["yes", "on", "1", "true", "TRUE"])
    func booleans(word: String) throws {
        let path = try Self.configFile("echo = \(word)\npermessage-deflate = \(word)\naddress-bans = no\nmedia-check = off\n")
        let settings = try ServeSettings.resolve(flags: ["config": path], environment: [:])
        #expect(settings.gateway.echoEndpoint && settings.gateway.permessageDeflate)
        #expect(!settings.gateway.room.addressBans && !settings.gateway.mediaCheck.enabled)
    }
}
