@testable import CowatchBridge
import Foundation
import SlashCommands
import Testing

@Suite("Prefixed commands, through the one command table")
struct PrefixCommandsTests {
    let commands = PrefixCommands(prefix: "!")

    @Test("a prefixed command becomes the room's slash line once the table accepts it")
    func prefixed() {
        #expect(commands.read("!watch https://example.org/a.mp4 Episode 1", action: false)
                == .line("/watch https://example.org/a.mp4 Episode 1"))
        #expect(commands.read("!play", action: false) == .line("/play"))
        #expect(commands.read("!SEEK 1:23", action: false) == .line("/SEEK 1:23"))
        #expect(commands.read("!help seek", action: false) == .line("/help seek"))
    }

    @Test("a bad command gets the table's own words, written with the prefix")
    func refused() {
        guard case .refused(let words) = commands.read("!seek soon", action: false) else {
            Issue.record("not refused")
            return
        }
        let table = LineParser().parse("/seek soon")
        guard case .failure(let error) = table else {
            Issue.record("the table accepted it")
            return
        }
        #expect(words == error.message.replacingOccurrences(of: "/seek", with: "!seek"))
        #expect(words.hasSuffix("(usage: !seek <time>)"))
        #expect(commands.read("!frobnicate", action: false) == .refused("unknown command !frobnicate (try !help)"))
    }

    @Test("the bare help is answered by the bridge, in one line naming people's commands under headings")
    func help() {
        #expect(commands.read("!help", action: false) == .help)
        #expect(commands.read("!help players", action: false) == .line("/help players"))
        let line = commands.helpLine()
        let names = Set(line.split(whereSeparator: { $0 == " " || $0 == ";" }).filter { $0.hasPrefix("!") && $0.count > 1 }.map { String($0.dropFirst()) })
        for spec in CommandTable.specs {
            let listed = names.contains(spec.name.rawValue)
            #expect(listed == (CommandReference.group(of: spec) != .players), "\(spec.usage)")
        }
        #expect(line.hasPrefix("Cowatch commands, in the room: !help !nick"))
        #expect(line.contains("!help players lists what players and bots send"))
    }

    @Test("chat: as it is; starting with / it is escaped; !! says a line starting with !")
    func chat() {
        #expect(commands.read("hello room", action: false) == .line("hello room"))
        #expect(commands.read("/shrug", action: false) == .line("//shrug"))
        #expect(commands.read("!!important", action: false) == .line("!important"))
        #expect(commands.read("! not a command", action: false) == .line("! not a command"))
        #expect(commands.read("!?", action: false) == .line("!?"))
        #expect(commands.read("   ", action: false) == .nothing)
    }

    @Test("/me is the room's /me, checked by the table too")
    func action() {
        #expect(commands.read("waves", action: true) == .line("/me waves"))
        guard case .refused = commands.read(String(repeating: "x", count: 300), action: true) else {
            Issue.record("a /me over the table's limit was accepted")
            return
        }
    }

    @Test("a line over the room's limit is refused before it is sent")
    func tooLong() {
        let short = PrefixCommands(prefix: "!", maximumLineBytes: 10)
        guard case .refused(let words) = short.read("this is too long for it", action: false) else {
            Issue.record("accepted")
            return
        }
        #expect(words.contains("10 bytes"))
    }

    @Test("the room's words are rewritten where a command starts, and links are left alone")
    func localized() {
        #expect(commands.localized("usage: /seek <time>") == "usage: !seek <time>")
        #expect(commands.localized("/pause (try /help)") == "!pause (try !help)")
        #expect(commands.localized("see https://example.org/play and a/b") == "see https://example.org/play and a/b")
        #expect(commands.localized("say \"/help\"") == "say \"!help\"")
        #expect(PrefixCommands(prefix: "cw!").localized("/play") == "cw!play")
    }
}
