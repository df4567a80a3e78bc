import SlashCommands
import Testing

/// Shared links told apart by their form alone (docs/protocol.md, "Links"): every
/// form of a YouTube or Vimeo video link is accepted with its id and start, and
/// the pages no player plays are refused with a sentence saying why.
@Suite("Links: media files, YouTube and Vimeo videos, and pages refused")
struct MediaSourceTests {
    /// A link and what it must be: `kind`, the provider's id, the start in seconds, live.
    struct Accepted: Sendable, CustomTestStringConvertible {
        let link: String
        let source: MediaSource
        var testDescription: String { link }
    }

    static func youtube(_ link: String, _ id: String = "dQw4w9WgXcQ", start: Double? = nil, live: Bool = false) -> Accepted {
        Accepted(link: link, source: .youtube(id: id, start: start.map { MediaTime(seconds: $0) }, live: live))
    }

    static func vimeo(_ link: String, _ id: String = "76979871", start: Double? = nil) -> Accepted {
        Accepted(link: link, source: .vimeo(id: id, start: start.map { MediaTime(seconds: $0) }))
    }

    static func file(_ link: String) -> Accepted { Accepted(link: link, source: .file) }

    static let accepted: [Accepted] = [
        youtube("https://www.youtube.com/watch?v=dQw4w9WgXcQ"),
        youtube("https://youtube.com/watch?v=dQw4w9WgXcQ"),
        youtube("http://m.youtube.com/watch?v=dQw4w9WgXcQ"),
        youtube("https://music.youtube.com/watch?v=dQw4w9WgXcQ&si=abc"),
        youtube("https://WWW.YouTube.COM/watch?v=dQw4w9WgXcQ"),
        youtube("https://www.youtube.com:443/watch?v=dQw4w9WgXcQ"),
        youtube("https://www.youtube.com./watch?v=dQw4w9WgXcQ"),
        youtube("https://www.youtube.com/watch/?v=dQw4w9WgXcQ"),
        youtube("https://www.youtube.com/watch?feature=share&v=dQw4w9WgXcQ&list=PL123&index=2"),
        youtube("https://www.youtube.com/watch?v=dQw4w9WgXcQ#comments"),
        youtube("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=90", start: 90),
        youtube("https://www.youtube.com/watch?t=90s&v=dQw4w9WgXcQ", start: 90),
        youtube("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=1m30s", start: 90),
        youtube("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=1h2m3s", start: 3723),
        youtube("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=2m", start: 120),
        youtube("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=1H", start: 3600),
        youtube("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=0", start: 0),
        youtube("https://youtu.be/dQw4w9WgXcQ"),
        youtube("https://youtu.be/dQw4w9WgXcQ?si=Xy12&t=42", start: 42),
        youtube("https://YOUTU.BE/dQw4w9WgXcQ"),
        youtube("https://www.youtube.com/shorts/aBc_-123XyZ", "aBc_-123XyZ"),
        youtube("https://youtube.com/shorts/aBc_-123XyZ?feature=share", "aBc_-123XyZ"),
        youtube("https://www.youtube.com/embed/dQw4w9WgXcQ"),
        youtube("https://www.youtube.com/embed/dQw4w9WgXcQ?start=90&autoplay=1", start: 90),
        youtube("https://www.youtube.com/live/jfKfPfyJRdk", "jfKfPfyJRdk", live: true),
        youtube("https://www.youtube.com/live/jfKfPfyJRdk?si=x&t=10", "jfKfPfyJRdk", start: 10, live: true),
        youtube("https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"),
        youtube("https://youtube-nocookie.com/embed/dQw4w9WgXcQ?start=5", start: 5),
        vimeo("https://vimeo.com/76979871"),
        vimeo("https://www.vimeo.com/76979871?share=copy"),
        vimeo("https://Vimeo.com/76979871#t=62", start: 62),
        vimeo("https://vimeo.com/76979871#t=1m2s", start: 62),
        vimeo("https://vimeo.com/channels/staffpicks/76979871"),
        vimeo("https://player.vimeo.com/video/76979871"),
        vimeo("https://player.vimeo.com/video/76979871?h=abc&autoplay=1#t=30s", start: 30),
        file("https://example.org/a.mp4"),
        file("https://example.org/watch?v=dQw4w9WgXcQ"),
        file("https://cdn.example.org/live/index.m3u8"),
        file("https://media.example.org/youtube.com/a.webm"),
        file("https://notyoutube.com/watch?v=dQw4w9WgXcQ"),
        file("https://www.twitch.tv.example.org/a.mp4"),
        file("https://vod-secure.twitch.tv.cdn.example.net/a.m3u8"),
    ]

    @Test("every accepted form gives the right source, id and start", arguments: accepted)
    func acceptedForms(_ row: Accepted) throws {
        let link = try #require(MediaURL(row.link))
        #expect(MediaSource.classify(link) == .accepted(row.source))
    }

    static let refused: [(link: String, words: String)] = [
        ("https://www.youtube.com/@LinusTechTips", "a YouTube channel"),
        ("https://www.youtube.com/@LinusTechTips/videos", "a YouTube channel"),
        ("https://www.youtube.com/channel/UCXuqSBlHAE6Xw-yeJA0Tunw", "a YouTube channel"),
        ("https://www.youtube.com/c/LinusTechTips", "a YouTube channel"),
        ("https://www.youtube.com/user/LinusTechTips", "a YouTube channel"),
        ("https://www.youtube.com/results?search_query=cats", "a YouTube search"),
        ("https://www.youtube.com/playlist?list=PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf", "playlist link names no video"),
        ("https://www.youtube.com/watch?list=PLrAXtmErZgOeiKm4sgNOknGvNjby9efdf", "playlist link names no video"),
        ("https://www.youtube.com/embed/videoseries?list=PL123", "playlist link names no video"),
        ("https://www.youtube.com/watch?v=dQw4w9WgXc", "\"dQw4w9WgXc\" is not a YouTube video id"),
        ("https://www.youtube.com/watch?v=dQw4w9WgXcQQ", "is not a YouTube video id"),
        ("https://www.youtube.com/watch?v=dQw4w9WgX%51", "is not a YouTube video id"),
        ("https://www.youtube.com/watch?v=", "is not a YouTube video id"),
        ("https://youtu.be/dQw4w9!gXcQ", "is not a YouTube video id"),
        ("https://www.youtube.com/shorts/short", "\"short\" is not a YouTube video id"),
        ("https://www.youtube.com/watch", "names no video (it has no v=)"),
        ("https://www.youtube.com/", "YouTube's home page"),
        ("https://www.youtube.com/feed/trending", "that YouTube page is not a video"),
        ("https://www.youtube.com/shorts/dQw4w9WgXcQ/extra", "that YouTube page is not a video"),
        ("https://youtu.be/", "that youtu.be link names no video"),
        ("https://www.youtube-nocookie.com/watch?v=dQw4w9WgXcQ", "youtube-nocookie.com page is not a video"),
        ("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=abc", "t=abc is not a starting time"),
        ("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=1s2m", "t=1s2m is not a starting time"),
        ("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=", "t= is not a starting time"),
        ("https://www.youtube.com/watch?v=dQw4w9WgXcQ&t=9999999", "is not a starting time"),
        ("https://vimeo.com/channels/staffpicks", "that Vimeo page is not one video"),
        ("https://vimeo.com/", "that Vimeo page is not one video"),
        ("https://vimeo.com/user12345", "that Vimeo page is not one video"),
        ("https://vimeo.com/76979871#t=soon", "#t=soon is not a starting time"),
        ("https://player.vimeo.com/video/abc", "player.vimeo.com link is not a video's player"),
        ("https://www.twitch.tv/somestreamer", "a Twitch link is a web page, not a video; Cowatch plays YouTube, Vimeo and links to media files"),
        ("https://twitch.tv/videos/123456", "a Twitch link is a web page"),
        ("https://clips.twitch.tv/SomeClip", "a Twitch link is a web page"),
        ("https://www.dailymotion.com/video/x7tgad0", "a Dailymotion link is a web page"),
        ("https://dai.ly/x7tgad0", "a Dailymotion link is a web page"),
        ("https://www.tiktok.com/@someone/video/1", "a TikTok link is a web page"),
    ]

    @Test("channel pages, searches, playlist-only links, malformed ids and page-only sites are refused in words",
          arguments: refused)
    func refusedForms(_ row: (link: String, words: String)) throws {
        let link = try #require(MediaURL(row.link))
        guard case .refused(let reason) = MediaSource.classify(link) else {
            Issue.record("\(row.link) was accepted as \(MediaSource.classify(link))")
            return
        }
        #expect(reason.contains(row.words), "\(reason)")
    }

    @Test("/watch and /queue refuse those links with bad-arguments naming the command, the reason and the usage")
    func commandsRefuse() {
        let parser = LineParser()
        for (line, command) in [("/watch https://www.youtube.com/@LinusTechTips Linus", CommandName.watch),
                                ("/queue https://www.twitch.tv/somestreamer", .queue)] {
            guard case .failure(let error) = parser.parse(line) else {
                Issue.record("\(line) was accepted")
                continue
            }
            #expect(error.code == .badArguments)
            #expect(error.command == command)
            #expect(error.message.hasPrefix("/\(command.rawValue): "))
            #expect(error.message.contains("usage: \(CommandTable.spec(command).usage)"))
        }
        guard case .failure(let error) = parser.parse("/watch https://www.youtube.com/channel/UCXuqSBlHAE6Xw-yeJA0Tunw") else {
            Issue.record("a channel page was accepted")
            return
        }
        #expect(error.message == "/watch: that is a YouTube channel, not a video: share the link of one of its videos "
                + "(youtube.com/watch?v=dQw4w9WgXcQ or youtu.be/dQw4w9WgXcQ) (usage: /watch <url> [title...])")
    }

    @Test("/subtitles takes any link: a track is a file, whatever host serves it")
    func subtitlesAnyLink() {
        #expect(LineParser().parse("/subtitles https://www.youtube.com/api/timedtext.vtt English")
                == .success(.command(.subtitles(url("https://www.youtube.com/api/timedtext.vtt"), label: "English"))))
    }

    @Test("two links to one video are one item; a file is its URL")
    func identity() throws {
        let forms = ["https://www.youtube.com/watch?v=dQw4w9WgXcQ", "https://youtu.be/dQw4w9WgXcQ?t=10",
                     "https://m.youtube.com/shorts/dQw4w9WgXcQ", "https://www.youtube-nocookie.com/embed/dQw4w9WgXcQ"]
        for form in forms {
            let link = try #require(MediaURL(form))
            #expect(MediaSource.classify(link).source?.identifier(for: link) == "youtube:dQw4w9WgXcQ")
        }
        let vimeo = try #require(MediaURL("https://player.vimeo.com/video/76979871"))
        #expect(MediaSource.classify(vimeo).source?.identifier(for: vimeo) == "vimeo:76979871")
        let file = try #require(MediaURL("https://example.org/a.mp4"))
        #expect(MediaSource.classify(file).source?.identifier(for: file) == "https://example.org/a.mp4")
    }

    @Test("starting times: 90, 90s, 1m30s, 1h2m3s; units in order, each once, within the longest time")
    func startingTimes() {
        #expect(MediaSource.startSeconds("90") == 90)
        #expect(MediaSource.startSeconds("90s") == 90)
        #expect(MediaSource.startSeconds("1m30s") == 90)
        #expect(MediaSource.startSeconds("1h2m3s") == 3723)
        #expect(MediaSource.startSeconds("1h3s") == 3603)
        #expect(MediaSource.startSeconds("277h") == 997_200)
        #expect(MediaSource.startSeconds("278h") == nil)
        #expect(MediaSource.startSeconds("1m1m") == nil)
        #expect(MediaSource.startSeconds("m") == nil)
        #expect(MediaSource.startSeconds("1x") == nil)
        #expect(MediaSource.startSeconds("1.5") == nil)
        #expect(MediaSource.startSeconds("-5") == nil)
        #expect(MediaSource.startSeconds("１０") == nil)
        #expect(MediaSource.startSeconds("1s1") == nil)
    }
}

@Suite("/duration: a player's report of the item's length or live edge")
struct DurationCommandTests {
    @Test("lengths and live edges parse; anything else is refused with the usage", arguments: [
        Row.command("/duration 12 60", .duration(seq: 12, .seconds(60))),
        Row.command("/duration 12 3600.25", .duration(seq: 12, .seconds(3600.25))),
        Row.command("/duration 12 live 7384.5", .duration(seq: 12, .live(edge: MediaTime(seconds: 7384.5)))),
        Row.command("/duration 12 LIVE 0", .duration(seq: 12, .live(edge: .zero))),
        Row.command("/duration 0 live 1000000000", .duration(seq: 0, .live(edge: MediaTime(seconds: 1e9)))),
    ] + Row.bad(.duration,
        "/duration", "/duration 12", "/duration 12 0", "/duration 12 -5", "/duration 12 1000000001",
        "/duration 12 1e3", "/duration 12 nan", "/duration 12 live", "/duration 12 live -1", "/duration 12 live 5 6",
        "/duration 12 60 more", "/duration x 60", "/duration -1 60"
    ))
    func rows(_ row: ParserCase) {
        check(row)
    }

    @Test("it is a player report, listed with /ready, /buffering and /ended")
    func listedWithReports() {
        let spec = CommandTable.spec(.duration)
        #expect(spec.audience == .players)
        #expect(spec.summary.hasPrefix("Player report:"))
        let names = CommandName.allCases
        let ended = names.firstIndex(of: .ended) ?? 0
        #expect(names.firstIndex(of: .duration) == ended + 1)
    }
}
