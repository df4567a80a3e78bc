/// Plain HTTP requests answered later (a subtitle track fetched through the
/// server, the cluster's rooms read from the database): each gets a number the
/// gateway answers by, and is forgotten when its socket closes first. `Handle`
/// is the libwebsockets layer's socket.
struct DeferredAnswers<Handle: Hashable> {
    private struct Waiting {
        var handle: Handle
        var headOnly: Bool
        var response: HTTPResponse?
    }

    /// The number the next request held will have.
    private(set) var nextID: UInt64 = 1
    private var waiting: [UInt64: Waiting] = [:]
    private var ids: [Handle: UInt64] = [:]

    var count: Int { waiting.count }

    /// The request on `handle` waits for its answer, under `nextID`.
    mutating func hold(_ handle: Handle, headOnly: Bool) {
        waiting[nextID] = Waiting(handle: handle, headOnly: headOnly)
        ids[handle] = nextID
        nextID += 1
    }

    /// The answer to request `id`: the socket to write it on, nil when it closed meanwhile.
    mutating func answer(_ id: UInt64, with response: HTTPResponse) -> Handle? {
        guard waiting[id] != nil else { return nil }
        waiting[id]?.response = response
        return waiting[id]?.handle
    }

    /// The socket can be written: the answer, when one is ready, taken.
    mutating func take(for handle: Handle) -> (response: HTTPResponse, headOnly: Bool)? {
        guard let id = ids[handle], let held = waiting[id], let response = held.response else { return nil }
        ids[handle] = nil
        waiting[id] = nil
        return (response, held.headOnly)
    }

    /// The socket closed.
    mutating func forget(_ handle: Handle) {
        if let id = ids.removeValue(forKey: handle) { waiting[id] = nil }
    }
}
