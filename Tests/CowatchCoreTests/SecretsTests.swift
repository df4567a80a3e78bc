import CowatchCore
import CowatchTime
import Foundation
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

@Suite("Room passwords: scrypt, and the digests saved before (docs/security.md)")
struct PasswordDigestTests {
    /// A digest in the form rooms were saved with before scrypt: SHA-256 iterated
    /// 1,000 times over this salt and "hunter2" (computed apart, with Python's hashlib).
    static let storedBefore = """
        {"salt":"0123456789abcdef0123456789abcdef","rounds":1000,\
        "digest":"f36cf27016973887248956c456b8f8c7dea4ad0e5489770fa82efd14347c0507"}
        """

    static func decode(_ json: String) throws -> PasswordDigest {
        try JSONDecoder().decode(PasswordDigest.self, from: Data(json.utf8))
    }

    @Test("scrypt: RFC 7914's second test vector (its first 32 bytes)")
    func knownScrypt() throws {
        let digest = try #require(PasswordDigest.make("password", salt: "NaCl",
                                                      hashing: PasswordHashing(cost: 1024, blockSize: 8, parallelism: 16)))
        #expect(digest.digest == "fdbabe1c9d3472007856e7190d01e9fe7c6ad7cbc8237830e77376634b373162")
    }

    @Test("a new digest names scrypt and its parameters, matches its password only, and reads back the same")
    func newFormatRoundTrip() throws {
        let hashing = PasswordHashing()
        let digest = try #require(PasswordDigest.make("hunter2", salt: "00112233445566778899aabbccddeeff", hashing: hashing))
        #expect(digest.algorithm == .scrypt(hashing))
        #expect(digest.matches("hunter2"))
        #expect(!digest.matches("hunter3"))
        #expect(!digest.matches(""))
        #expect(!digest.isOutdated(for: hashing))
        #expect(digest.isOutdated(for: PasswordHashing(cost: 4096)))
        let json = String(decoding: try JSONEncoder().encode(digest), as: UTF8.self)
        for field in ["\"algorithm\":\"scrypt\"", "\"cost\":1024", "\"blockSize\":8", "\"parallelism\":1",
                      "\"salt\":\"00112233445566778899aabbccddeeff\"", "\"digest\":\"\(digest.digest)\""] {
            #expect(json.contains(field), "\(field) in \(json)")
        }
        #expect(try Self.decode(json) == digest)
    }

    @Test("a digest saved before scrypt is read, matches its password only, and is outdated")
    func oldFormatAccepted() throws {
        let digest = try Self.decode(Self.storedBefore)
        #expect(digest.algorithm == .iteratedSHA256(rounds: 1000))
        #expect(digest.matches("hunter2"))
        #expect(!digest.matches("hunter3"))
        #expect(digest.isOutdated(for: PasswordHashing()))
        let again = try Self.decode(String(decoding: try JSONEncoder().encode(digest), as: UTF8.self))
        #expect(again == digest)
    }

    @Test("an algorithm this server does not know, or parameters past the bounds, match no password and do not hang")
    func unusableDigests() throws {
        let unknown = try Self.decode(#"{"algorithm":"argon2id","salt":"s","digest":"d"}"#)
        #expect(unknown.algorithm == .unknown("argon2id"))
        #expect(!unknown.matches("hunter2"))
        #expect(String(decoding: try JSONEncoder().encode(unknown), as: UTF8.self).contains("\"algorithm\":\"argon2id\""))
        let huge = try Self.decode(#"{"algorithm":"scrypt","cost":1073741824,"blockSize":8,"parallelism":1,"salt":"s","digest":"d"}"#)
        #expect(!huge.matches("hunter2"))
        let endless = try Self.decode(#"{"salt":"s","rounds":1000000000,"digest":"d"}"#)
        #expect(!endless.matches("hunter2"))
        #expect(PasswordDigest.make("hunter2", salt: "s", hashing: PasswordHashing(cost: 1000)) == nil)
        #expect(PasswordHashing(cost: 1000).problem != nil)
        #expect(PasswordHashing(blockSize: 17).problem != nil)
        #expect(PasswordHashing().problem == nil)
    }

    /// A room restored from a snapshot whose password is `digest`, founded by alice.
    static func restored(with digest: PasswordDigest) -> (Room, ServerInstant) {
        var room = Scenario()
        room.connect("alice", address: "10.0.0.1", newOwnerKey: "alice-key")
        room.say("alice", "/password placeholder")
        var snapshot = room.room.snapshot(at: room.now)
        snapshot.protection?.password = digest
        let (restored, _) = Room.restore(snapshot, members: [], chat: [], downSince: room.now,
                                         maximumDowntime: ServerInterval(milliseconds: 60_000), now: room.now)
        return (restored, room.now)
    }

    @Test("a right password re-makes an old digest with scrypt, saved with the arrival; a wrong one changes nothing")
    func oldFormatUpgraded() throws {
        let old = try Self.decode(Self.storedBefore)
        var (room, now) = Self.restored(with: old)
        // The owner is back first, so that a newcomer's arrival alone saves nothing.
        guard case .accepted = room.connectionOpened(ConnectRequest(name: "alice", newToken: "t0", ownerKey: "alice-key"),
                                                     now: now)
        else { Issue.record("the owner was refused"); return }
        let wrong = room.connectionOpened(ConnectRequest(name: "eve", newToken: "t1", address: "10.6.6.6", password: "hunter3"),
                                          now: now)
        guard case .refused(let error) = wrong else { Issue.record("a wrong password came in"); return }
        #expect(error.code == .wrongPassword)
        #expect(room.protection.password == old)

        guard case .accepted(_, let actions) = room.connectionOpened(
            ConnectRequest(name: "bob", newToken: "t2", address: "10.0.0.2", password: "hunter2"), now: now)
        else { Issue.record("the right password was refused"); return }
        let upgraded = try #require(room.protection.password)
        #expect(upgraded.algorithm == .scrypt(PasswordHashing()))
        #expect(upgraded.salt != old.salt)
        #expect(upgraded.matches("hunter2"))
        #expect(!upgraded.matches("hunter3"))
        let saved = actions.compactMap { action -> PasswordDigest? in
            if case .persist(let snapshot) = action { return snapshot.protection?.password }
            return nil
        }
        #expect(saved == [upgraded])

        // The new digest lets the next member in and stays as it is.
        now = now.advanced(by: ServerInterval(milliseconds: 1_000))
        guard case .accepted = room.connectionOpened(
            ConnectRequest(name: "carol", newToken: "t3", address: "10.0.0.3", password: "hunter2"), now: now)
        else { Issue.record("the upgraded digest refused the right password"); return }
        #expect(room.protection.password == upgraded)
    }

    @Test("a digest made with other scrypt parameters is re-made with the configured ones on the next right password")
    func parametersChange() throws {
        let before = try #require(PasswordDigest.make("hunter2", salt: "0011", hashing: PasswordHashing(cost: 2048)))
        let (restored, now) = Self.restored(with: before)
        var room = restored
        guard case .accepted = room.connectionOpened(
            ConnectRequest(name: "bob", newToken: "t2", address: "10.0.0.2", password: "hunter2"), now: now)
        else { Issue.record("the right password was refused"); return }
        #expect(room.protection.password?.algorithm == .scrypt(PasswordHashing()))
        #expect(room.protection.password?.matches("hunter2") == true)
    }

    @Test("/password keeps a scrypt digest with the configured parameters and a salt of its own each time")
    func setPassword() throws {
        let hashing = PasswordHashing(cost: 1024, blockSize: 4, parallelism: 1)
        var room = Scenario(configuration: RoomConfiguration(passwordHashing: hashing))
        room.connect("alice", newOwnerKey: "key")
        room.say("alice", "/password hunter2")
        let first = try #require(room.room.protection.password)
        #expect(first.algorithm == .scrypt(hashing))
        #expect(first.salt.count == 32)
        #expect(first.matches("hunter2"))
        room.say("alice", "/password hunter2")
        let second = try #require(room.room.protection.password)
        #expect(second.salt != first.salt)
        #expect(second.digest != first.digest)
        #expect(room.connect("bob", password: "hunter2") != nil)
    }

    @Test("/password with unusable hashing parameters is refused and leaves the room without a password")
    func unusableParameters() {
        var room = Scenario(configuration: RoomConfiguration(passwordHashing: PasswordHashing(cost: 1000)))
        room.connect("alice", newOwnerKey: "key")
        room.say("alice", "/password hunter2")
        room.expectRefused("alice", .notPossible, saying: "password-hash")
        #expect(room.room.protection.password == nil)
        #expect(!room.state.policy.password)
        #expect(room.connect("bob") != nil)
    }
}
