/// Why a member's player is separated from the group, as in SharePlay's
/// `AVCoordinatedPlaybackSuspension.Reason`; clients may also use their own names.
public struct SuspensionReason: Hashable, Sendable, RawRepresentable {
    public let rawValue: String

    /// Accepts 1 to 64 characters of `A-Z a-z 0-9 . _ -`, so reasons print safely
    /// in both encodings and can be named again in `/resume`.
    public init?(rawValue: String) {
        guard Self.isValid(rawValue) else { return nil }
        self.rawValue = rawValue
    }

    private init(known: String) { self.rawValue = known }

    public static let maximumLength = 64

    public static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return false }
        return bytes.allSatisfy { byte in
            (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                || byte == 0x2E || byte == 0x5F || byte == 0x2D
        }
    }

    public static let stallRecovery = SuspensionReason(known: "stallRecovery")
    public static let audioSessionInterrupted = SuspensionReason(known: "audioSessionInterrupted")
    public static let playingInterstitial = SuspensionReason(known: "playingInterstitial")
    public static let coordinatedPlaybackNotPossible = SuspensionReason(known: "coordinatedPlaybackNotPossible")
    public static let userActionRequired = SuspensionReason(known: "userActionRequired")
    public static let userIsChangingCurrentTime = SuspensionReason(known: "userIsChangingCurrentTime")
    /// The browser paused the video of a page in the background (the room page
    /// says so itself, and ends it when the page is shown again).
    public static let away = SuspensionReason(known: "away")
    /// The person paused for themselves only ("Pause just for me"; a member who
    /// may not pause the room and pauses from the lock screen).
    public static let pausedForMe = SuspensionReason(known: "pausedForMe")
    /// Held during `/catchup`; it ends by itself when the member is level with the group.
    public static let catchup = SuspensionReason(known: "catchup")

    /// The reasons SharePlay names; `/suspend` with no reason uses `userActionRequired`.
    public static let known: [SuspensionReason] = [
        .stallRecovery, .audioSessionInterrupted, .playingInterstitial,
        .coordinatedPlaybackNotPossible, .userActionRequired, .userIsChangingCurrentTime, .catchup,
    ]
}

extension SuspensionReason: CustomStringConvertible {
    public var description: String { rawValue }
}
