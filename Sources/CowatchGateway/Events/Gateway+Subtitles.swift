/// Subtitle tracks fetched through the server for the page (`SubtitleProxy`
/// decides, `SubtitleFetch` fetches): a request names a track of what its room
/// is watching now; it is answered at once when it names nothing the room has,
/// and otherwise when the fetch is done (`LWSServer` holds the HTTP request
/// meanwhile).
extension Gateway {
    enum SubtitleAnswer {
        case now(HTTPResponse)
        /// Answered later with `LWSServer.answerDeferred(_:with:)`.
        case later
    }

    func subtitleRequest(_ request: SubtitleProxy.Request, id: UInt64, address: String) -> SubtitleAnswer {
        metrics.httpRequests["subtitles", default: 0] += 1
        let link: String
        switch SubtitleProxy.source(request, in: rooms[request.room]?.room.state) {
        case .failure(let refusal): return .now(SubtitleProxy.response(.failure(refusal)))
        case .success(let found): link = found
        }
        switch state.subtitleFetchOffered(from: address) {
        case .addressBusy:
            return .now(SubtitleProxy.response(.failure(SubtitleProxy.Refusal(
                status: 429, message: "subtitles for your address are already being fetched; try again once they are done"))))
        case .serverBusy:
            return .now(SubtitleProxy.response(.failure(SubtitleProxy.Refusal(
                status: 503, message: "the server is fetching many subtitles at once; try again shortly"))))
        case .granted:
            break
        }
        emit(.fetchSubtitles(link, httpRequest: id, address: address))
        return .later
    }

    /// On the service thread: a fetch is done; its request is answered if the
    /// page is still there.
    func subtitlesFetched(_ id: UInt64, _ outcome: SubtitleFetch.Outcome, address: String) {
        state.subtitleFetchFinished(for: address)
        if case .failure(let refusal) = outcome {
            logger.info("subtitles not served", metadata: ["why": "\(refusal.message)"])
        }
        emit(.answer(httpRequest: id, SubtitleProxy.response(outcome)))
    }
}
