@testable import CowatchGateway
import Testing

/// The rules of `HTTPRequestRules` and `SocketLimits`, one by one, without sockets.
@Suite("HTTP request rules and socket limits")
struct HTTPRequestRulesTests {
    static func head(_ method: HTTPRequestHead.Method? = .get, _ path: String = "/", host: String? = "127.0.0.1",
                     lengths: [String] = [], chunked: Bool = false, continues: Bool = false, http10: Bool = false) -> HTTPRequestHead {
        HTTPRequestHead(method: method, path: path, pathContinues: continues, hosts: host.map { [$0] } ?? [],
                        http10: http10, contentLengths: lengths, transferEncoding: chunked)
    }

    static let hosts = HostAllowlist(names: ["watch.example.org", "*.example.net"])

    @Test("GET and HEAD pass everywhere; POST only under /admin")
    func methods() {
        #expect(HTTPRequestRules.refusal(Self.head(.get, "/healthz"), hosts: Self.hosts) == nil)
        #expect(HTTPRequestRules.refusal(Self.head(.head, "/"), hosts: Self.hosts) == nil)
        #expect(HTTPRequestRules.refusal(Self.head(.post, "/admin/rooms"), hosts: Self.hosts) == nil)
        let refusal = HTTPRequestRules.refusal(Self.head(.post, "/healthz"), hosts: Self.hosts)
        #expect(refusal?.status == 405)
        #expect(refusal?.allow == "GET, HEAD")
        #expect(refusal?.close == false)
        #expect(HTTPRequestRules.refusal(Self.head(nil), hosts: Self.hosts)?.status == 400)
    }

    @Test("framing: two lengths, a length with Transfer-Encoding, a bad length, any body: 400 or 413, and closed")
    func framing() {
        for head in [Self.head(lengths: ["5", "40"]), Self.head(lengths: ["5", "5"]), Self.head(lengths: ["3"], chunked: true),
                     Self.head(lengths: ["-1"]), Self.head(lengths: ["1e3"])] {
            let refusal = HTTPRequestRules.refusal(head, hosts: Self.hosts)
            #expect(refusal?.status == 400, "\(head)")
            #expect(refusal?.close == true)
        }
        #expect(HTTPRequestRules.refusal(Self.head(.post, "/admin/drain", lengths: ["12"]), hosts: Self.hosts)?.status == 413)
        #expect(HTTPRequestRules.refusal(Self.head(.post, "/admin/drain", chunked: true), hosts: Self.hosts)?.status == 413)
        #expect(HTTPRequestRules.refusal(Self.head(.post, "/admin/drain", lengths: ["0"]), hosts: Self.hosts) == nil)
    }

    @Test("Host: one, known; HTTP/1.0 may leave it out")
    func host() {
        #expect(HTTPRequestRules.refusal(Self.head(host: nil), hosts: Self.hosts)?.status == 400)
        #expect(HTTPRequestRules.refusal(Self.head(host: nil, http10: true), hosts: Self.hosts) == nil)
        #expect(HTTPRequestRules.refusal(Self.head(host: "evil.example"), hosts: Self.hosts)?.status == 421)
        var twice = Self.head()
        twice.hosts = ["127.0.0.1", "127.0.0.1"]
        #expect(HTTPRequestRules.refusal(twice, hosts: Self.hosts)?.status == 400)
    }

    @Test("a path that goes on past ; or & is not found")
    func path() {
        #expect(HTTPRequestRules.refusal(Self.head(.get, "/metrics", continues: true), hosts: Self.hosts)?.status == 404)
    }

    @Test("names and addresses a Host may give", arguments: [
        ("127.0.0.1", true), ("127.0.0.1:7480", true), ("[::1]:7480", true), ("localhost", true), ("app.localhost:80", true),
        ("watch.example.org", true), ("Watch.Example.Org:443", true), ("a.example.net", true), ("example.net", false),
        ("evil.example", false), ("watch.example.org.evil", false), ("", false), ("a b", false), ("host:port", false),
        ("[::1", false), ("10.0.0.1:99999", false),
    ] as [(String, Bool)])
    func allowlist(host: String, allowed: Bool) {
        #expect(Self.hosts.allows(host) == allowed)
    }

    @Test("sockets per address and in all; a trusted proxy counts toward the total only; closing frees a place")
    func sockets() {
        var limits = SocketLimits(perAddress: 2, total: 3)
        limits.opened("a")
        limits.opened("a")
        #expect(limits.refusal(for: "a", trusted: false) == .perAddress)
        #expect(limits.refusal(for: "a", trusted: true) == nil)
        #expect(limits.refusal(for: "b", trusted: false) == nil)
        limits.opened("b")
        #expect(limits.refusal(for: "c", trusted: false) == .total)
        limits.closed("a")
        #expect(limits.refusal(for: "a", trusted: false) == nil)
        limits.closed("unknown")
        #expect(limits.openTotal == 2)
        #expect(SocketLimits.total(configured: 50_000, descriptorLimit: 20_000) == 20_000 - SocketLimits.reservedDescriptors)
        #expect(SocketLimits.total(configured: 100, descriptorLimit: 20_000) == 100)
    }

    @Test("a start with the default max-connections under a lower descriptor limit says so as information, not a warning")
    func startupNote() {
        let byDefault = SocketLimits.startupNote(configured: GatewayConfiguration.defaultMaximumConnections, isDefault: true,
                                                 descriptorLimit: 20_000)
        #expect(byDefault?.warning == false)
        #expect(SocketLimits.startupNote(configured: 60_000, isDefault: false, descriptorLimit: 20_000)?.warning == true)
        #expect(SocketLimits.startupNote(configured: 1_000, isDefault: false, descriptorLimit: 20_000) == nil)
    }
}
