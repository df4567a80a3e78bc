import CowatchCore
import SlashCommands
import Testing

@Suite("Digests and keyed derivations of the secrets a room keeps (swift-crypto)")
struct SecretDigestTests {
    @Test("SHA-256: the FIPS 180-4 examples, as the hex digests stores hold")
    func knownDigests() {
        #expect(SecretDigest.hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        #expect(SecretDigest.hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        #expect(SecretDigest.hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
                == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        #expect(SecretDigest.hex(String(repeating: "a", count: 1000)).hasPrefix("41edece42d63e8d9bf515a9ba6932e1c"))
    }

    @Test("HMAC-SHA256: RFC 4231's second test case")
    func knownKeyedDigest() {
        #expect(SecretDigest.keyed("what do ya want for nothing?", secret: "Jefe")
                == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
    }

    @Test("digests compare equal only when every character is, wherever they differ")
    func constantTimeEquality() {
        let digest = SecretDigest.hex("key")
        #expect(SecretDigest.equal(digest, SecretDigest.hex("key")))
        #expect(!SecretDigest.equal(digest, SecretDigest.hex("kez")))
        #expect(!SecretDigest.equal(digest, "0" + digest.dropFirst()))
        #expect(!SecretDigest.equal(digest, digest.dropLast() + "0"))
        #expect(!SecretDigest.equal("abc", "abcd"))
        #expect(SecretDigest.equal("", ""))
    }

    @Test("invite links and bot tokens are keyed (HMAC-SHA256) from the host's secret, and the room keeps their SHA-256")
    func tokensAreKeyed() throws {
        var room = Scenario()
        room.connect("alice", newOwnerKey: "key")
        let secret = try #require(room.tokens["alice"])
        room.say("alice", "/invite 2")
        guard case .invite(let invite, let inviteToken, _)? = room.reply(for: "alice") else {
            Issue.record("no invite"); return
        }
        #expect(inviteToken == String(SecretDigest.keyed("invite/1/\(room.now.milliseconds)", secret: secret).prefix(32)))
        #expect(invite.tokenDigest == SecretDigest.hex(inviteToken))
        room.say("alice", "/token dj-bot chat")
        guard case .token(let bot, let botToken)? = room.reply(for: "alice") else { Issue.record("no token"); return }
        #expect(botToken == SecretDigest.keyed("token/1/\(room.now.milliseconds)", secret: secret))
        #expect(bot.digest == SecretDigest.hex(botToken))
        #expect(room.connect("dj", token: botToken) != nil)
    }
}
