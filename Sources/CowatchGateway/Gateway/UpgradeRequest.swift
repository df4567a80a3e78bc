import CowatchCore

/// What a WebSocket upgrade asked for, captured while its headers are available.
struct UpgradeRequest {
    var room: RoomName?
    var echo: Bool
    /// `/relay/ROOM`: another node's shared link for the room (`RelayWire`).
    var relay = false
    /// A relay link's `X-Cowatch-Relay-Proof` header (`RelayProof`).
    var relayProof: String?
    var name: String?
    var resume: String?
    var player: Bool
    var join: Bool
    /// The room's owner key (`owner=`).
    var owner: String?
    /// The identity the page or client keeps (`device=`), for bans.
    var device: String?
    /// The program the member watches with (`software=`), shown to others.
    var software: String?
    /// One of this server's fronts opened it (`Gateway.provesFront`).
    var fromFront = false
    /// An invite link's token (`invite=`) and the room password (`password=`).
    var invite: String?
    var password: String?
    /// A bot's token (`token=`, or `Authorization: Bearer`).
    var token: String?
    /// An operator's room-creation token (`create=`), for `room-creation token`.
    var create: String?
    /// The page's `Origin` and the `Host` it asked for, when a browser sent them.
    var origin: String?
    var hostHeader: String?
    var address: String
}
