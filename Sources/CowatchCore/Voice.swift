import CowatchTime
import SlashCommands

/// A member's seat in the room's voice (docs/voice.md). Not kept across a
/// restart or a disconnect: the media server's side of it goes with them.
public struct VoiceSeat: Hashable, Sendable {
    /// The media server answered the member's offer; until then the seat is
    /// taken but nobody is told of it.
    public internal(set) var seated = false
    /// The member muted its own microphone (`/voice mute`).
    public internal(set) var selfMuted = false
    /// The media server hears the member speak.
    public internal(set) var speaking = false
}

/// Who is in a room's voice, as every member is told (`voice` events): the
/// whole roster each time, so that a client needs no earlier one to draw it.
public struct VoiceRoster: Hashable, Sendable {
    public struct Seat: Hashable, Sendable {
        public var id: MemberID
        public var name: DisplayName
        /// Muted by itself or by a host: the others do not hear it.
        public var muted: Bool
        public var speaking: Bool

        public init(id: MemberID, name: DisplayName, muted: Bool, speaking: Bool) {
            self.id = id
            self.name = name
            self.muted = muted
            self.speaking = speaking
        }
    }

    /// What changed; `list` answers `/voice` and greets a newcomer.
    public var change: VoiceChange
    /// Whom the change is about (nil for `list` and `mode`).
    public var member: MemberID?
    /// Its name, which a departed seat no longer shows.
    public var name: DisplayName?
    public var mode: VoiceMode
    /// Seats in arrival order: those the media server answered.
    public var seats: [Seat]

    public init(change: VoiceChange, member: MemberID?, name: DisplayName?, mode: VoiceMode, seats: [Seat]) {
        self.change = change
        self.member = member
        self.name = name
        self.mode = mode
        self.seats = seats
    }
}

public enum VoiceChange: String, Hashable, Sendable, CaseIterable {
    case list, joined, left, muted, unmuted, speaking, quiet, mode
}

/// How a member's page reaches the media server: the answer to `/voice join`.
public struct VoiceTicket: Hashable, Sendable {
    public var iceServers: [IceServer]
    /// When the TURN credentials in it stop working (a page asks again after).
    public var expires: ServerInstant

    public init(iceServers: [IceServer], expires: ServerInstant) {
        self.iceServers = iceServers
        self.expires = expires
    }
}

/// One entry of WebRTC's `RTCConfiguration.iceServers`.
public struct IceServer: Hashable, Sendable {
    public var urls: [String]
    public var username: String?
    public var credential: String?

    public init(urls: [String], username: String? = nil, credential: String? = nil) {
        self.urls = urls
        self.username = username
        self.credential = credential
    }
}

/// What the room asks of its host's media server link (`RoomAction.voice`):
/// the room has already decided that the member may.
public enum VoiceOrder: Hashable, Sendable {
    /// Give this member a ticket (`VoiceTicket`), with fresh TURN credentials.
    case ticket(MemberID)
    /// Seat this member with its offer (base64, as it sent it), muted or not;
    /// answer with `Room.voiceJoined` or `Room.voiceFailed`.
    case join(MemberID, name: DisplayName, offer: String, muted: Bool)
    case mute(MemberID, Bool)
    /// Take the member out of the media server's room (a leave, a kick, a
    /// disconnect, a mode it no longer passes).
    case leave(MemberID)
}

/// What a room's voice allows (settings `voice-*`).
public struct VoiceLimits: Hashable, Sendable {
    /// Whether this server has a media server at all; without one, `/voice join`
    /// is refused and newcomers are not told of voice.
    public var available: Bool
    /// Members of one room in its voice at once.
    public var seats: Int
    /// Of those, how many may have their microphone on at once: a newcomer past
    /// it joins muted, and an unmute past it is refused.
    public var speakers: Int

    public init(available: Bool = false, seats: Int = 50, speakers: Int = 10) {
        self.available = available
        self.seats = seats
        self.speakers = speakers
    }
}
