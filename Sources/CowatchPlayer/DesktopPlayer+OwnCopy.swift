import CowatchCore
import Foundation
import SlashCommands

/// Own copies (docs/protocol.md, "Own copies"): the room names a file by its
/// identity and each member plays their own. mpv plays the file it was given
/// only once that file is the item, and the room is told either way with
/// `/have`, so that it waits for this player only when it has the file.
extension DesktopPlayer {
    /// Where the check of the given file against the room's own-copy item stands.
    enum CopyCheck: Sendable, Hashable {
        /// Its size and hash match; mpv is reading its length.
        case checking
        /// It is the item: played, and counted by the room.
        case has
        /// Not the item, or no file: why, in words. The player stays in the room, not watching.
        case refused(String)
    }

    /// Sharing the given file as the room's item (`/watch own`), which needs its
    /// length: mpv loads it first.
    enum Share: Sendable, Hashable {
        /// Asked for: done once joined and the file's length is known.
        case wanted(title: String)
        /// mpv is loading the file to read its length.
        case loading(title: String)
        /// `/watch own` sent: done when the room's item is the file, or when the room refuses.
        case sent(title: String)

        /// mpv is the share's until the room answers: the room's item waits.
        var holdsMpv: Bool {
            if case .wanted = self { false } else { true }
        }
    }

    /// The path to play for own-copy item `own`, or nil (and the reason kept,
    /// mpv emptied) when the given file cannot be it.
    mutating func checkCopy(_ own: OwnCopy, _ activity: Activity) -> String? {
        guard let localFile else {
            refuseCopy(LocalCopy.askText(own, title: activity.title, duration: activity.duration?.seconds))
            return nil
        }
        if let why = localFile.refusal(of: own) {
            refuseCopy("your file is not the room's: \(why)")
            return nil
        }
        copy = .checking
        return localFile.path
    }

    mutating func refuseCopy(_ why: String) {
        copy = .refused(why)
        tell(why)
        if loadedTarget != nil {
            out.append(.unload)
            loadedTarget = nil
            video.loaded = false
            video.position = nil
            video.duration = nil
        }
    }

    /// Once mpv has read the file's length: the item is the file, or it is not.
    mutating func checkCopyLength() {
        guard copy == .checking, let activity = state?.joinedActivity, activity.identifier == src, let localFile,
              loadedTarget == localFile.path, video.loaded, let duration = video.duration, duration > 0 else { return }
        // The room knows every own copy's length: it was shared with it.
        if let expected = activity.duration, let why = LocalCopy.durationRefusal(duration, expected: expected.seconds) {
            refuseCopy("your file is not the room's: \(why)")
        } else {
            copy = .has
            note("the file is the room's item (\(localFile.identifier))")
        }
    }

    /// `/have <seq> yes|no` once the answer is known, once per item and connection
    /// (and after a state on this connection: the one kept from before may be stale).
    mutating func reportCopy() {
        guard appliedSeq != nil, let state, let activity = state.joinedActivity, activity.source.ownCopy != nil, activity.identifier == src,
              me?.joined == true, let copy else { return }
        let yes: Bool
        switch copy {
        case .checking: return
        case .has: yes = true
        case .refused: yes = false
        }
        if let sent = haveSent, sent.item == src, sent.yes == yes { return }
        haveSent = (src ?? "", yes)
        send("/have \(state.seq) \(yes ? "yes" : "no")")
    }

    /// `/watch own <hash> <bytes> <seconds> [title]` for the given file, once
    /// welcomed (mpv reads the length first; a room without an item has no one
    /// joined to a session yet). Nothing is sent of the file's name.
    mutating func shareFile() {
        guard let share, let localFile, let state, me != nil else { return }
        if state.joinedActivity?.identifier == localFile.identifier {
            // The room's item is this file already (shared from here, or by another).
            self.share = nil
            return
        }
        switch share {
        case .wanted(let title):
            self.share = .loading(title: title)
            // The room's current item stops here until the file is shared.
            src = nil
            cancelJoin()
            running = nil
            pause()
            loadTarget(localFile.path)
            note("reading the length of \(localFile.path) to share it")
        case .loading(let title):
            guard loadedTarget == localFile.path, video.loaded, let duration = video.duration, duration > 0,
                  duration.isFinite else { return }
            self.share = .sent(title: title)
            let words = title.trimmingCharacters(in: .whitespaces)
            send("/watch own \(OwnCopy.hashText(localFile.hash)) \(localFile.size) \(Self.seconds(duration))"
                 + (words.isEmpty ? "" : " \(words)"))
        case .sent:
            return
        }
    }
}
