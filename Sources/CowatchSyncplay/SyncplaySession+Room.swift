import CowatchCore
import CowatchTime
import Crypto
import Foundation
import SlashCommands

/// What the room says, told to the Syncplay client in its own messages.
extension SyncplaySession {
    /// Close codes after which the member is out: removed by a host (4001), or
    /// refused by a ban, a lock, a password or a bad token (4003 to 4006),
    /// replaced (4002), or closed for flooding or a full room (1008).
    static let finalCloseCodes: Set<UInt16> = [4001, 4002, 4003, 4004, 4005, 4006, 1008]
    /// Closes that say the room is elsewhere or back soon: a node going (1001),
    /// the room moved (4010), the room out of reach for now (4011).
    static let passingCloseCodes: Set<UInt16> = [1001, 4010, 4011]

    mutating func roomSaid(_ event: RoomEvent, now: Now) -> [Action] {
        switch event {
        case .welcome(let welcome):
            return welcomed(welcome, now: now)
        case .state(let new):
            return stateChanged(new, now: now)
        case .participant(let participant, let change):
            return participantChanged(participant, change)
        case .participantLeft(let id, let name, _):
            participants.removeAll { $0.id == id }
            guard id != memberID else { return [] }
            return [.write(["Set": ["user": [name.text: ["room": roomObject, "event": ["left": true]]]]])]
        case .chat(let line):
            let text = line.me ? "* \(line.name.text) \(line.text)" : line.text
            return [.write(["Chat": ["username": .string(line.name.text), "message": .string(text)]])]
        case .notice(let notice):
            // Play, pause and seek are shown by Syncplay itself, from the state's setBy.
            let shownBySyncplay: Set<Cause> = [.play, .pause, .seek, .ready]
            if let cause = notice.cause, shownBySyncplay.contains(cause) { return [] }
            return [self.notice(notice.text)]
        case .error(let error):
            return refused(error, now: now)
        case .reply, .time, .catchup, .voice, .voiceTicket, .voiceAnswer:
            return []
        }
    }

    private mutating func welcomed(_ welcome: Welcome, now: Now) -> [Action] {
        let first = phase == .joining
        memberID = welcome.you.id
        shownName = welcome.you.name.text
        resume = welcome.resume
        if let key = welcome.ownerKey { ownerKey = key }
        participants = welcome.participants
        reconnects = 0
        phase = .inRoom
        var actions: [Action] = []
        if let claimed = claimedOwnership {
            claimedOwnership = nil
            // The key it came with is right: it is the key it controls with from now on.
            if welcome.you.owner { ownerKey = claimed }
            let success = welcome.you.owner || welcome.you.role == .host
            actions.append(.write(["Set": ["controllerAuth": ["user": .string(shownName), "room": roomObject["name"] ?? .null,
                                                              "success": .bool(success)]]]))
            if !success { actions.append(notice("That is not this room's owner key.")) }
        }
        guard first else { return actions }
        let features: SyncplayJSON = [
            "isolateRooms": true, "readiness": true, "managedRooms": true, "persistentRooms": true, "chat": true,
            "maxChatMessageLength": .number(Double(welcome.limits.lineBytes)), "maxUsernameLength": 32,
            "maxRoomNameLength": .number(Double(RoomName.maximumLength)), "maxFilenameLength": 250,
            "setOthersReadiness": false,
        ]
        var hello: [String: SyncplayJSON] = [
            "username": .string(shownName), "room": roomObject, "version": .string(clientVersion),
            "realversion": .string(Self.protocolVersion), "features": features, "motd": .string(settings.motd),
        ]
        if welcome.ownerKey != nil {
            hello["motd"] = .string((settings.motd.isEmpty ? "" : settings.motd + "\n")
                + "You created the room \(welcome.room.rawValue): you are its owner. Its owner key makes you its owner again from anywhere: \(ownerKey?.uppercased() ?? "")")
        }
        actions.append(.write(["Hello": .object(hello)]))
        actions.append(.write(list()))
        for participant in participants where participant.role == .host {
            actions.append(controllerSuccess(participant.name.text))
        }
        return actions
    }

    /// The version of Syncplay's protocol this server answers as: clients read
    /// features from it and from `features`.
    static let protocolVersion = "1.7.0"

    var roomObject: SyncplayJSON {
        ["name": .string(room?.rawValue ?? "")]
    }

    func controllerSuccess(_ name: String) -> Action {
        .write(["Set": ["controllerAuth": ["user": .string(name), "room": roomObject["name"] ?? .null, "success": true]]])
    }

    private mutating func participantChanged(_ participant: Participant, _ change: ParticipantChange) -> [Action] {
        let index = participants.firstIndex { $0.id == participant.id }
        let before = index.map { participants[$0] }
        if let index { participants[index] = participant } else { participants.append(participant) }
        if participant.id == memberID { shownName = participant.name.text }
        let name = participant.name.text
        switch change {
        case .arrived where participant.id != memberID:
            return [.write(["Set": ["user": [name: ["room": roomObject, "event": ["joined": true, "version": .string(Self.protocolVersion)]]]]]),
                    .write(["Set": ["ready": ["username": .string(name), "isReady": .bool(Self.isReady(participant)), "manuallyInitiated": false]]])]
        case .renamed(let from):
            return [.write(["Set": ["user": [from.text: ["room": roomObject, "event": ["left": true]]]]]),
                    .write(["Set": ["user": [name: ["room": roomObject, "event": ["joined": true]]]]])]
        case .role:
            if participant.role == .host, before?.role != .host { return [controllerSuccess(name)] }
            // Syncplay has no word for losing control: the list says who controls now.
            return [.write(list())]
        case .ready, .suspended, .resumed, .joinedSession, .leftSession, .reconnected, .disconnected, .copy:
            guard participant.id != memberID, Self.isReady(participant) != before.map(Self.isReady) else { return [] }
            return [.write(["Set": ["ready": ["username": .string(name), "isReady": .bool(Self.isReady(participant)), "manuallyInitiated": false]]])]
        default:
            return []
        }
    }

    /// Another member as Syncplay's readiness shows it: someone the room's starts
    /// wait for or start with (in the session, connected, not suspended, with the
    /// item). The room itself waits for each player's `/ready`, so Syncplay's
    /// "not ready" would only hold its client back from pressing play.
    static func isReady(_ participant: Participant) -> Bool {
        participant.joined && participant.connected && participant.suspensions.isEmpty && participant.copy != false
    }

    // MARK: The room's state

    private mutating func stateChanged(_ new: RoomState, now: Now) -> [Action] {
        let old = state
        state = new
        var actions = playlistActions()
        let moved = Self.moved(from: old?.playback, to: new.playback)
        let itemChanged = old?.session?.activity.id != new.session?.activity.id
        if itemChanged {
            haveSent = nil
            actions += ownCopyAnswer()
            if old != nil { actions.append(.write(list())) }
        }
        if old == nil || moved || itemChanged || old?.playback.status != new.playback.status {
            actions += stateActions(forced: true, doSeek: moved || itemChanged, now: now)
        }
        if new.playback.status == .playing, new.playback.at > now.server {
            // The coordinated start: the client is told to play early by as much as
            // its player has been late, so that it leaves at the instant.
            let wait = new.playback.at.milliseconds - now.server.milliseconds - Int64((startLead * 1000).rounded())
            actions.append(.schedule(.start(seq: new.seq), after: .milliseconds(max(0, wait))))
        }
        return actions + readiness(now: now)
    }

    // MARK: What the room's clock does for a Syncplay player

    /// How early a coordinated start is told: the median of how late its player
    /// left its last starts (the message's way there, Syncplay's own pause
    /// between commands to mpv, mpv's start), or half the round trip before any.
    var startLead: Double {
        guard !startLags.isEmpty else { return roundTrip / 2 }
        let sorted = startLags.sorted()
        return min(Self.maximumStartLead, max(0, sorted[sorted.count / 2]))
    }

    static let maximumStartLead = 0.3
    static let lagSamples = 5
    /// A report this long after a start tells how late the player left (Syncplay's
    /// client polls mpv every 100 ms, and answers each State).
    static let lagSampleAfterMilliseconds: Int64 = 300
    /// A held player nearer the position than this is where the room is: a frame
    /// at 24 fps, and more than the step of mpv's exact seek.
    static let holdTolerance = 0.045

    /// A start's lateness, from the first report after it that shows the player going.
    mutating func measureStart(_ state: RoomState, position: Double, paused: Bool, now: Now) -> [Action] {
        guard let sample = lagSample, sample.seq == state.seq, now.server >= sample.from else { return [] }
        lagSample = nil
        guard state.playback.status == .playing, !paused else { return [] }
        let late = state.playback.position(at: now.server).seconds - position
        // Beyond a second it is not lateness but a player that was elsewhere.
        guard abs(late) < 1 else { return [] }
        startLags = Array(([late] + startLags).prefix(Self.lagSamples))
        return [.log("syncplay start", ["late_ms": "\(Int((late * 1000).rounded()))",
                                        "lead_ms": "\(Int((startLead * 1000).rounded()))"])]
    }

    /// A held player (paused, or waiting for a start) put back exactly where the
    /// room holds, once per state: Syncplay's client itself moves it only past a
    /// second (`SEEK_THRESHOLD`), so a pause it heard late, or a play it pressed
    /// before the room's start, would leave it that far off.
    mutating func keepHeld(_ state: RoomState, position: Double, paused: Bool, doSeek: Bool, now: Now) -> [Action] {
        guard paused, !doSeek, correctedSeq != state.seq, shownPaused(state, now: now.server),
              state.session?.isActive == true,
              abs(position - state.playback.position.seconds) > Self.holdTolerance else { return [] }
        correctedSeq = state.seq
        return stateActions(forced: true, doSeek: true, now: now, correction: true)
    }

    /// Whether a new playback is somewhere the old one would not have reached by
    /// playing on: a seek, a new item, a start elsewhere.
    static func moved(from old: Playback?, to new: Playback) -> Bool {
        guard let old else { return true }
        if old.item != new.item { return true }
        let expected = old.position(at: new.at).seconds
        return abs(expected - new.position.seconds) > 0.25
    }

    /// The room's state as Syncplay's `State` (`protocols.py`, `sendState`):
    /// forced ones carry Syncplay's ignoring-on-the-fly counter, and until the
    /// client acknowledges it, the periodic ones wait.
    /// `correction`: a seek of the room's own (set by "Cowatch"), which Syncplay's
    /// client carries out where it would ignore a seek set by its own user.
    mutating func stateActions(forced: Bool, doSeek: Bool, now: Now, correction: Bool = false) -> [Action] {
        guard let state else { return [] }
        if forced { serverIgnoring += 1 }
        guard serverIgnoring == 0 || forced else { return [] }
        let playback = state.playback
        let paused = shownPaused(state, now: now.server)
        // Until its instant a start is at its position, whether shown early or not.
        let position = playback.position(at: now.server).seconds
        var ping: [String: SyncplayJSON] = ["latencyCalculation": .number(Self.seconds(now.server)), "serverRtt": .number(roundTrip)]
        if let latency = clientLatency {
            let processing = Double(now.server.milliseconds - latency.arrived.milliseconds) / 1000
            ping["clientLatencyCalculation"] = .number(latency.value + max(0, processing))
            clientLatency = nil
        }
        var message: [String: SyncplayJSON] = [
            "playstate": ["position": .number(max(0, position)), "paused": .bool(paused), "doSeek": .bool(doSeek),
                          "setBy": (correction ? Self.noticeName : setByName(playback)).map { .string($0) } ?? .null],
            "ping": .object(ping),
        ]
        var ignoring: [String: SyncplayJSON] = [:]
        if serverIgnoring > 0 { ignoring["server"] = .number(Double(serverIgnoring)) }
        if clientIgnoring > 0 {
            ignoring["client"] = .number(Double(clientIgnoring))
            clientIgnoring = 0
        }
        if !ignoring.isEmpty { message["ignoringOnTheFly"] = .object(ignoring) }
        return [.write(["State": .object(message)])]
    }

    func setByName(_ playback: Playback) -> String? {
        guard let by = playback.by else { return nil }
        return participants.first { $0.id == by }?.name.text
    }

    // MARK: The member's reports

    /// `/ready` for a start the room waits for: once the client has taken the
    /// forced state (it acknowledged it) and stands at the held position, unless
    /// the person said they are not ready. Syncplay's readiness is Cowatch's: a
    /// person not ready is waited for, as long as the room's policy waits.
    mutating func readiness(now: Now) -> [Action] {
        guard phase == .inRoom, let state, state.playback.status == .waiting, state.seq > readySent,
              serverIgnoring == 0, ready != false, let reported,
              abs(reported.position - state.playback.position.seconds) < Self.readyTolerance else { return [] }
        if let copy = state.session?.activity.source.ownCopy, !Self.matches(file, copy) { return [] }
        readySent = state.seq
        return [.sendRoom("/ready \(state.seq)")]
    }

    /// How near the held position a Syncplay player must stand to count as there:
    /// its client seeks only past Syncplay's `SEEK_THRESHOLD` of one second.
    static let readyTolerance = 1.5

    /// `/have` for an own-copy item, from the client's file.
    mutating func ownCopyAnswer() -> [Action] {
        guard phase == .inRoom, let state, let activity = state.session?.activity, state.session?.isActive == true,
              let copy = activity.source.ownCopy, file != nil else { return [] }
        let yes = Self.matches(file, copy)
        if let haveSent, haveSent.item == activity.id, haveSent.yes == yes { return [] }
        haveSent = (activity.id, yes)
        return [.sendRoom("/have \(state.seq) \(yes ? "yes" : "no")")]
    }

    /// Syncplay's own test of the same file (`utils.py`: `sameFilesize`,
    /// `sameFileduration`), against the item's size and length, whatever its name:
    /// the sizes equal (or their hashes, for a client that hashes what it
    /// sends; a size not sent passes, as it does in Syncplay), and the lengths
    /// within 2.5 seconds once rounded.
    static func matches(_ file: SyncplayJSON?, _ copy: OwnCopy) -> Bool {
        guard let file, let duration = file["duration"]?.number else { return false }
        guard abs(duration.rounded() - copy.duration.seconds.rounded()) < 2.5 else { return false }
        switch file["size"] {
        case .number(let size)?:
            return size == 0 || Int64(exactly: size) == copy.size
        case .string(let hashed)?:
            return hashed.isEmpty || hashed.lowercased() == hashedSize(copy.size)
        default:
            return true
        }
    }

    /// Syncplay's hashed size (`utils.hashFilesize`): SHA-256 of the size in
    /// decimal, its first 12 hex digits.
    static func hashedSize(_ size: Int64) -> String {
        let digest = SHA256.hash(data: Array(String(size).utf8))
        return String(digest.map { byte in
            let hex = String(byte, radix: 16)
            return hex.count == 1 ? "0" + hex : hex
        }.joined().prefix(12))
    }

    // MARK: Refusals and the member's end

    private mutating func refused(_ error: CommandError, now: Now) -> [Action] {
        switch error.code {
        case .staleReport, .notAPlayer:
            // Our own reports raced the room's next state: the next one is answered.
            return []
        default:
            break
        }
        var actions: [Action] = [notice(error.message)]
        if let command = error.command, Self.playbackCommands.contains(command.rawValue) {
            // Corrected as Syncplay's managed rooms correct a non-controller: the room's state, forced.
            actions += stateActions(forced: true, doSeek: true, now: now)
        }
        if let command = error.command, ["queue", "watch", "next", "move"].contains(command.rawValue) {
            toldPlaylist = nil
            actions += playlistActions()
        }
        return actions
    }

    static let playbackCommands: Set<String> = ["play", "pause", "seek"]

    mutating func memberClosed(code: UInt16?, reason: String, now: Now) -> [Action] {
        let words = reason.isEmpty ? "the room closed the connection" : reason
        if let code, Self.finalCloseCodes.contains(code)
            || phase == .joining && !Self.passingCloseCodes.contains(code) {
            // Told in Syncplay's Error, after which its client stops reconnecting.
            phase = .closed
            return [.log("syncplay member refused or removed", ["code": "\(code)", "reason": reason]),
                    .write(Self.error(words)), .close]
        }
        guard code != 1001, reconnects < settings.maximumReconnects, let room else {
            // The server is going (a restart), or the room stays out of reach: the
            // connection closes without an Error, and Syncplay's client comes back
            // by itself, with its own back-off, to a server that is there again.
            phase = .closed
            return [.log("syncplay member's room out of reach; the client is let go to come back", ["code": code.map { "\($0)" } ?? "none", "reason": reason]),
                    .close]
        }
        // The room moved to another node, or the node is going: back with the same member.
        reconnects += 1
        return open(room, resume: resume, owner: nil, now: now)
    }

    // MARK: List

    /// An item as a file's name, the way Syncplay names what it plays: a link's
    /// last part ("movie.mp4" for https://example.org/media/movie.mp4), so that
    /// a client playing its own file of that name sees no difference; an own
    /// copy's title.
    static func fileName(_ activity: Activity) -> String {
        guard let url = activity.url?.text else { return activity.title }
        let path = url.split(separator: "?", maxSplits: 1).first.map(String.init) ?? url
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        return last.isEmpty || path.hasSuffix("//" + last) ? url : (last.removingPercentEncoding ?? last)
    }

    func list() -> SyncplayJSON {
        var users: [String: SyncplayJSON] = [:]
        for participant in participants where participant.connected {
            let readiness = participant.id == memberID ? ready ?? false : Self.isReady(participant)
            var entry: [String: SyncplayJSON] = [
                "position": 0, "controller": .bool(participant.role == .host), "isReady": .bool(readiness),
                "features": participant.id == memberID ? clientFeatures : [:],
            ]
            if participant.id == memberID, let file {
                entry["file"] = file
            } else if participant.player, participant.copy != false, let activity = state?.session?.activity {
                // A copy Cowatch matched is the same file whatever its name: shown
                // under this client's name for it, so that Syncplay sees no difference.
                let copy = activity.source.ownCopy
                let sameFile = copy.map { Self.matches(file, $0) } ?? false
                let name = sameFile ? file?["name"]?.string : nil
                // Syncplay's client reads name, duration and size of every file it
                // is told of (0: not known, which it takes as no difference).
                var shown: [String: SyncplayJSON] = ["name": .string(name ?? Self.fileName(activity)),
                                                     "duration": .number(activity.duration?.seconds ?? 0), "size": 0]
                if sameFile, let size = file?["size"] { shown["size"] = size } else if let copy { shown["size"] = .number(Double(copy.size)) }
                entry["file"] = .object(shown)
            } else {
                entry["file"] = [:]
            }
            users[participant.name.text] = .object(entry)
        }
        return ["List": [room?.rawValue ?? "": .object(users)]]
    }
}

