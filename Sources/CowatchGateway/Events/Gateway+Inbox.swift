import CowatchClient
import CowatchConnection
import CowatchCore
import CowatchStore
import CowatchTime

/// What other threads hand the service thread (`Gateway.post`).
enum ServiceMessage: Sendable {
    case mediaCheck(UInt64, MediaCheck.Verdict, started: MonotonicInstant, address: String)
    /// A subtitle track fetched for the plain HTTP request `id` (`Gateway+Subtitles.swift`).
    case subtitles(UInt64, SubtitleFetch.Outcome, address: String)
    case placement(RoomName, PostgresLeases.Placement)
    case renewal(PostgresLeases.Renewal)
    case operatorChangeShared(SharedOperatorChange)
    case clusterRoomsListed(UInt64, [(room: String, node: String)]?)
    case fenced(RoomName, epoch: Int64)
    case ceilingExtended(RoomName, epoch: Int64, ceiling: Int64, granted: Bool?)
    case relayOpened(UInt64)
    case relayReceived(UInt64, String)
    case relayClosed(UInt64, CloseInfo)
    /// The media server's link (`Voice/Gateway+Voice.swift`), by the link's number.
    case voiceOpened(UInt64)
    case voiceReceived(UInt64, String)
    case voiceClosed(UInt64)
    /// The time source was moved ahead (`Gateway.timeSkipped`); then, once handled.
    case timeSkipped(@Sendable () -> Void)
}

extension Gateway {
    /// One message from another thread, on the service thread (`serviceWoken`).
    func handle(_ message: ServiceMessage) {
        switch message {
        case .timeSkipped(let then):
            // What came due in the skipped time runs now, as if its timers had fired.
            fireTimers()
            housekeeping()
            eventEnds()
            then()
        case .mediaCheck(let id, let verdict, let started, let address):
            applyMediaCheck(id, verdict: verdict, started: started, address: address)
        case .subtitles(let id, let outcome, let address):
            subtitlesFetched(id, outcome, address: address)
        case .placement(let room, let placement):
            placed(room, placement)
        case .renewal(let renewal):
            renewed(renewal)
        case .operatorChangeShared(let change):
            state.operatorChangeShared(change)
        case .clusterRoomsListed(let id, let found):
            clusterRoomsListed(id, found)
        case .fenced(let room, let epoch):
            fenced(room, epoch: epoch)
        case .ceilingExtended(let room, let epoch, let ceiling, let granted):
            ceilingExtended(room, epoch: epoch, ceiling: ceiling, granted: granted)
        case .relayOpened(let id):
            relayOpened(id)
        case .relayReceived(let id, let text):
            relayReceived(id, text)
        case .relayClosed(let id, let info):
            relayClosed(id, info)
        case .voiceOpened(let number):
            voiceLinkOpened(number)
        case .voiceReceived(let number, let text):
            voiceReceived(number, text)
        case .voiceClosed(let number):
            voiceLinkClosed(number)
        }
    }
}
