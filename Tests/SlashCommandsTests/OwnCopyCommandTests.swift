import SlashCommands
import Testing

private func copy(_ hash: UInt64, _ size: Int64, _ seconds: Double) -> OwnCopy {
    guard let copy = OwnCopy(hash: hash, size: size, duration: seconds) else { fatalError("test copy is not valid") }
    return copy
}

@Suite("/watch own and /have: a file each member plays from their own disk")
struct OwnCopyCommandTests {
    @Test("an own copy is its hash, size and length, with an optional title; anything else is refused", arguments: [
        Row.command("/watch own 8e245d9679d31e12 1400000000 6130", .watchOwn(copy(0x8e24_5d96_79d3_1e12, 1_400_000_000, 6130), title: nil)),
        Row.command("/watch OWN 8E245D9679D31E12 1400000000 6130.5 Movie night",
                    .watchOwn(copy(0x8e24_5d96_79d3_1e12, 1_400_000_000, 6130.5), title: "Movie night")),
        Row.command("/watch own 0000000000000001 1 0.04", .watchOwn(copy(1, 1, 0.04), title: nil)),
    ] + Row.bad(.watch,
        "/watch own", "/watch own 8e245d9679d31e12", "/watch own 8e245d9679d31e12 1400000000",
        "/watch own 8e245d9679d31e1 1400000000 6130", "/watch own 8e245d9679d31e123 1400000000 6130",
        "/watch own +e245d9679d31e12 1400000000 6130", "/watch own 8e245d9679d31e1g 1400000000 6130",
        "/watch own 8e245d9679d31e12 0 6130", "/watch own 8e245d9679d31e12 -5 6130",
        "/watch own 8e245d9679d31e12 1125899906842625 6130", "/watch own 8e245d9679d31e12 1400000000 0",
        "/watch own 8e245d9679d31e12 1400000000 nan", "/watch own 8e245d9679d31e12 1400000000 1000000001"
    ))
    func watchRows(_ row: ParserCase) {
        check(row)
    }

    @Test("a malformed hash is refused saying what a hash is")
    func hashRefusal() {
        guard case .failure(let error) = LineParser().parse("/watch own movie.mkv 1400000000 6130") else {
            Issue.record("a file name was taken for a hash")
            return
        }
        #expect(error.message.contains("\"movie.mkv\" is not a file's hash: 16 hex digits"))
    }

    @Test("/have says yes or no for a state", arguments: [
        Row.command("/have 12 yes", .have(seq: 12, true)),
        Row.command("/have 12 NO", .have(seq: 12, false)),
    ] + Row.bad(.have,
        "/have", "/have 12", "/have 12 maybe", "/have 12 yes more", "/have x yes"
    ))
    func haveRows(_ row: ParserCase) {
        check(row)
    }

    @Test("/have is a player report")
    func haveIsAReport() {
        let spec = CommandTable.spec(.have)
        #expect(spec.audience == .players)
        #expect(spec.summary.hasPrefix("Player report:"))
    }

    @Test("the identity and the neutral title: own:<hash>:<size>, size and length in words, never a name")
    func identityAndTitle() {
        let movie = copy(0x0000_00ab_cdef_0123, 1_400_000_000, 6130)
        #expect(movie.hashText == "000000abcdef0123")
        #expect(movie.identifier == "own:000000abcdef0123:1400000000")
        #expect(movie.neutralTitle == "a file of 1.4 GB, 1:42:10")
        #expect(OwnCopy.sizeText(999) == "999 bytes")
        #expect(OwnCopy.sizeText(65_536) == "65.5 KB")
        #expect(OwnCopy.sizeText(999_960) == "1.0 MB")
        #expect(OwnCopy(hash: 1, size: 0, duration: 5) == nil)
        #expect(OwnCopy(hash: 1, size: 5, duration: .infinity) == nil)
    }
}
