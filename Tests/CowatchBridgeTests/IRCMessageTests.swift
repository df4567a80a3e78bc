@testable import CowatchBridge
import Testing

@Suite("IRC messages: parsing")
struct IRCMessageParsingTests {
    @Test("prefix, command, middle parameters and trailing")
    func fullMessage() throws {
        let message = try #require(IRCMessage.parse(":ann!~ann@example.org PRIVMSG #cowatch :hello there: all"))
        #expect(message.prefix == IRCPrefix(name: "ann", user: "~ann", host: "example.org"))
        #expect(message.nick == "ann")
        #expect(message.command == "PRIVMSG")
        #expect(message.parameters == ["#cowatch", "hello there: all"])
    }

    @Test("a server's numeric, with the prefix naming the server")
    func numeric() throws {
        let message = try #require(IRCMessage.parse(":irc.example.net 433 * cowatch :Nickname already in use\r\n"))
        #expect(message.command == "433")
        #expect(message.nick == nil)
        #expect(message.parameters == ["*", "cowatch", "Nickname already in use"])
    }

    @Test("no prefix, no parameters; a lower-case command is upper-cased")
    func bare() throws {
        let message = try #require(IRCMessage.parse("ping"))
        #expect(message.prefix == nil)
        #expect(message.command == "PING")
        #expect(message.parameters.isEmpty)
    }

    @Test("several spaces between parameters, and an empty trailing parameter")
    func spacing() throws {
        let message = try #require(IRCMessage.parse("MODE   #c   +k    key"))
        #expect(message.parameters == ["#c", "+k", "key"])
        #expect(IRCMessage.parse("TOPIC #c :")?.parameters == ["#c", ""])
    }

    @Test("IRCv3 tags are read, with their escapes")
    func tags() throws {
        let message = try #require(IRCMessage.parse("@time=2024-01-01T00:00:00Z;msg=a\\sb\\:c;flag :n!u@h PRIVMSG #c :x"))
        #expect(message.tags["time"] == "2024-01-01T00:00:00Z")
        #expect(message.tags["msg"] == "a b;c")
        #expect(message.tags["flag"] == "")
        #expect(message.nick == "n")
    }

    @Test("the fifteenth parameter takes the rest of the line")
    func fifteenParameters() throws {
        let words = (1...17).map(String.init).joined(separator: " ")
        let message = try #require(IRCMessage.parse("CMD " + words))
        #expect(message.parameters.count == 15)
        #expect(message.parameters.last == "15 16 17")
    }

    @Test("a line without a command is no message")
    func empty() {
        #expect(IRCMessage.parse("") == nil)
        #expect(IRCMessage.parse(":prefix.only") == nil)
        #expect(IRCMessage.parse("   ") == nil)
    }
}

@Suite("IRC messages: writing")
struct IRCMessageWritingTests {
    @Test("the last parameter becomes trailing when it needs to")
    func trailing() {
        #expect(IRCMessage(command: "PRIVMSG", ["#c", "hello world"]).line() == .success("PRIVMSG #c :hello world"))
        #expect(IRCMessage(command: "PRIVMSG", ["#c", ":)"]).line() == .success("PRIVMSG #c ::)"))
        #expect(IRCMessage(command: "PRIVMSG", ["#c", ""]).line() == .success("PRIVMSG #c :"))
        #expect(IRCMessage(command: "JOIN", ["#c", "key"]).line() == .success("JOIN #c key"))
    }

    @Test("CR, LF and NUL are refused: they would end the line or forge another")
    func forbidden() {
        #expect(IRCMessage(command: "PRIVMSG", ["#c", "a\rb"]).line() == .failure(.forbiddenCharacter))
        #expect(IRCMessage(command: "PRIVMSG", ["#c", "a\r\nQUIT :bye"]).line() == .failure(.forbiddenCharacter))
        #expect(IRCMessage(command: "PRIVMSG", ["#c", "a\0b"]).line() == .failure(.forbiddenCharacter))
    }

    @Test("only the last parameter may hold a space or be empty")
    func middle() {
        #expect(IRCMessage(command: "KICK", ["#c x", "ann"]).line() == .failure(.badMiddleParameter))
        #expect(IRCMessage(command: "KICK", ["", "ann"]).line() == .failure(.badMiddleParameter))
    }

    @Test("512 bytes with CR-LF at most")
    func length() {
        let fits = "a " + String(repeating: "a", count: 512 - 2 - "PRIVMSG #c :a ".utf8.count)
        #expect(IRCMessage(command: "PRIVMSG", ["#c", fits]).line() == .success("PRIVMSG #c :" + fits))
        #expect(IRCMessage(command: "PRIVMSG", ["#c", fits + "a"]).line() == .failure(.tooLong(bytes: 513)))
    }

    @Test("a written message parses back to itself")
    func roundTrip() throws {
        let message = IRCMessage(prefix: IRCPrefix(name: "n", user: "u", host: "h"), command: "PRIVMSG", ["#c", "a b :c"])
        let line = try message.line().get()
        #expect(IRCMessage.parse(line) == message)
    }
}
