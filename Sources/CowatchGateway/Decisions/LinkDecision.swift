import CowatchCore
import SlashCommands

/// What becomes of a shared link once its check answered (`MediaCheck.Verdict`).
/// Pure: the verdict, the link, the command and whether it would replace another
/// item playing in the room, a decision out.
///
/// A link that could not be checked is shared with a word to its sender, except
/// where it would do harm: a `/watch` that would replace what everyone is watching
/// with a link that is neither a provider's video nor named like a media file.
/// Such a link is most often a web page whose server did not answer the check, and
/// every page would then show an error instead of the item; `/queue` still shares
/// it, without taking anything off the screen.
public enum LinkDecision: Hashable, Sendable {
    /// To the room, without a word.
    case share
    /// To the room, and the sender is told this.
    case shareWithNotice(String)
    /// Not to the room: the sender gets this error.
    case refuse(ErrorCode, String)

    public static func after(_ verdict: MediaCheck.Verdict, link: MediaURL, command: CommandName,
                             replacesItem: Bool) -> LinkDecision {
        switch verdict {
        case .media:
            return .share
        case .mediaWithoutSeeking(let why):
            return .shareWithNotice("that link is shared, but seeking in it will not work: \(why)")
        case .notMedia(let why):
            return .refuse(.notMedia, "/\(command.rawValue): \(why)")
        case .unchecked(let why):
            if command == .watch, replacesItem, !looksPlayable(link) {
                return .refuse(.notMedia, "/watch: that link could not be checked (\(why)) and does not look like a "
                               + "media file (.mp4, .webm, .m3u8...), so it would replace what everyone is watching with "
                               + "something no player may play; /queue it to share it anyway")
            }
            return .shareWithNotice("that link could not be checked (\(why)); shared anyway: if it does not play, it is not a video file")
        }
    }

    /// A provider's video, or a link whose file name ends in a media extension.
    public static func looksPlayable(_ link: MediaURL) -> Bool {
        guard MediaSource.classify(link) == .accepted(.file) else { return true }
        return MediaCheck.mediaExtensions.contains(MediaCheck.fileExtension(path(of: link)))
    }

    /// The path of a link, without its query or fragment.
    static func path(of link: MediaURL) -> String {
        let afterScheme = link.text.drop { $0 != ":" }.dropFirst().drop { $0 == "/" }
        let fromPath = afterScheme.drop { $0 != "/" && $0 != "?" && $0 != "#" }
        return String(fromPath.prefix { $0 != "?" && $0 != "#" })
    }
}
