import CowatchCore
import CowatchTime
import Crypto
import Foundation

/// Where the node's media server is and how members' pages reach it
/// (settings `voice-*`, docs/voice.md). Without a URL and a secret the server
/// runs without voice, and says so to whoever asks for a seat.
public struct VoiceConfiguration: Sendable {
    /// Janus's WebSocket API, `ws://127.0.0.1:PORT` (loopback: members never reach it).
    public var janusURL: String?
    /// Janus's API secret (`voice-secret-file`).
    public var janusSecret: String?
    /// Rooms with voice on this node at once.
    public var maximumRooms = 100
    /// TURN servers handed to members' pages (`turn:HOST:PORT?transport=udp`...).
    public var turnURLs: [String] = []
    /// The secret shared with the TURN server (coturn's `static-auth-secret`):
    /// each ticket's credentials are made from it and last `credentialLifetime`.
    public var turnSecret: String?
    /// STUN servers handed to pages besides (`stun:HOST:PORT`).
    public var stunURLs: [String] = []
    public var credentialLifetime: Duration = .seconds(4 * 3600)
    /// Packets (20 ms each) the media server holds of each speaker before it
    /// mixes them (`voice-jitter-packets`).
    public var jitterPackets = 3

    public init() {}

    public var isConfigured: Bool { janusURL != nil && janusSecret != nil }

    /// The ICE servers of a ticket for `member` of `room` at `now`: TURN with
    /// credentials made by TURN's REST-style shared secret (the username is
    /// when they expire and whose they are; the password, that username signed
    /// with HMAC-SHA1 and the secret, which coturn checks the same way), so no
    /// lasting password is ever in a page.
    func ticket(for member: MemberID, of room: RoomName, now: ServerInstant) -> VoiceTicket {
        let lifetime = ServerInterval(credentialLifetime)
        let expires = now.advanced(by: lifetime)
        var servers: [IceServer] = []
        if !stunURLs.isEmpty { servers.append(IceServer(urls: stunURLs)) }
        if let turnSecret, !turnURLs.isEmpty {
            let username = "\(expires.milliseconds / 1000):\(room.rawValue).\(member.rawValue)"
            servers.append(IceServer(urls: turnURLs, username: username,
                                     credential: Self.turnPassword(username: username, secret: turnSecret)))
        }
        return VoiceTicket(iceServers: servers, expires: expires)
    }

    static func turnPassword(username: String, secret: String) -> String {
        let code = HMAC<Insecure.SHA1>.authenticationCode(for: Data(username.utf8), using: SymmetricKey(data: Data(secret.utf8)))
        return Data(code).base64EncodedString()
    }

    /// The session description in a `/voice offer`, or why it is not one: an
    /// offer of audio alone, in printable ASCII lines (RFC 8866).
    static func offer(fromBase64 text: String) -> Result<String, OfferProblem> {
        guard let data = Data(base64Encoded: text) else { return .failure(.notBase64) }
        guard data.allSatisfy({ byte in byte == 0x0D || byte == 0x0A || (0x20...0x7E).contains(byte) }) else {
            return .failure(.notText)
        }
        let sdp = String(decoding: data, as: UTF8.self)
        guard sdp.hasPrefix("v=0") else { return .failure(.notText) }
        let media = sdp.split(whereSeparator: \.isNewline).filter { $0.hasPrefix("m=") }
        guard !media.isEmpty, media.allSatisfy({ $0.hasPrefix("m=audio ") }) else { return .failure(.notAudio) }
        return .success(sdp)
    }

    enum OfferProblem: Error, Hashable {
        case notBase64, notText, notAudio

        var sentence: String {
            switch self {
            case .notBase64: "the offer is not base64"
            case .notText: "the offer is not a session description"
            case .notAudio: "the offer must be of audio alone"
            }
        }
    }
}
