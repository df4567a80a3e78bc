@testable import CowatchBridge
import CowatchConfig
import Testing

@Suite("Matrix pairs in the bridge's settings")
struct MatrixSettingsTests {
    static let common = """
    homeserver = https://matrix.example.org/
    matrix-user = @cowatch:example.org
    matrix-token = abc
    owner-key-directory = /var/lib/cowatch-bridge

    """

    @Test("a [pair] with matrix = is a Matrix pair; its pairs share one connection; IRC pairs beside them are unchanged")
    func pairs() throws {
        let text = Self.common + """
        [pair]
        matrix = "#movies:example.org"
        room = movies

        [pair]
        matrix = !abc:example.org
        room = anime
        prefix = ?

        [pair]
        irc = irc://irc.example.net/#movies
        room = movies
        """
        let settings = try BridgeSettings.resolve(file: ("bridge.conf", text), environment: [:], flags: [:])
        #expect(settings.pairs.map(\.irc.channel) == ["#movies"])
        #expect(settings.pairs[0].relay.botName == "IRC" && !settings.pairs[0].relay.slashCommands)
        #expect(settings.matrixPairs.map(\.matrixRoom) == ["#movies:example.org", "!abc:example.org"])
        let first = try #require(settings.matrixPairs.first)
        #expect(first.connection.homeserver == "https://matrix.example.org")
        #expect(first.connection.stateFile == "/var/lib/cowatch-bridge/matrix-state.json")
        #expect(first.relay.channel == "#movies:example.org" && first.relay.network == "matrix")
        #expect(first.relay.botName == "Matrix" && first.relay.slashCommands)
        #expect(settings.matrixPairs[1].relay.prefix == "?")
        let plan = BridgePlan(settings)
        #expect(plan.networks.count == 2, "one IRC connection and one Matrix connection")
        #expect(plan.pairs.map(\.network) == [0, 1, 1])
    }

    @Test("mistakes are named: no sign-in, both networks in one pair, an unquoted alias, one bot with two settings")
    func mistakes() {
        func problem(_ text: String) -> String? {
            do {
                _ = try BridgeSettings.resolve(file: ("bridge.conf", text), environment: [:], flags: [:])
                return nil
            } catch {
                return "\(error)"
            }
        }
        #expect(problem("homeserver = https://m.example.org\nmatrix-user = @b:example.org\n[pair]\nmatrix = !a:example.org\nroom = r\n")?
            .contains("matrix-token (an access token) or matrix-password") == true)
        #expect(problem(Self.common + "[pair]\nmatrix = !a:example.org\nirc = irc://h/#c\nroom = r\n")?.contains("not both") == true)
        #expect(problem(Self.common + "[pair]\nmatrix = movies:example.org\nroom = r\n")?.contains("#alias:server or !id:server") == true)
        #expect(problem(Self.common + "[pair]\nmatrix = !a:example.org\nroom = r\n[pair]\nmatrix = !b:example.org\nroom = s\nmatrix-sync-timeout = 5\n")?
            .contains("must agree") == true)
        #expect(problem(Self.common + "[pair]\nmatrix = !a:example.org\nroom = r\n[pair]\nmatrix = !a:example.org\nroom = s\n")?
            .contains("bridged twice") == true)
        #expect(problem("homeserver = https://m.example.org/path\n")?.contains("no path") == true)
    }
}
