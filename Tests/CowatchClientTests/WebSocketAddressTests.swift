import CowatchClient
import Testing

@Suite("A room's address, in every form a person is given it")
struct WebSocketAddressTests {
    @Test("the page's https:// link and wss:// are over TLS, on 443 unless a port is named")
    func secureForms() throws {
        let link = try #require(WebSocketAddress("https://watch.example.org/rooms/lobby"))
        #expect(link.secure && link.host == "watch.example.org" && link.port == 443 && link.path == "/rooms/lobby")
        let socket = try #require(WebSocketAddress("wss://watch.example.org:8443/rooms/lobby?name=bob"))
        #expect(socket.secure && socket.port == 8443 && socket.path == "/rooms/lobby?name=bob")
        #expect(socket.webSocketURL == "wss://watch.example.org:8443/rooms/lobby?name=bob")
        #expect(link.webSocketURL == "wss://watch.example.org/rooms/lobby")
    }

    @Test("http:// and ws:// stay plain, on 80 unless a port is named; the scheme's case does not matter")
    func plainForms() throws {
        let page = try #require(WebSocketAddress("HTTP://127.0.0.1:7480/rooms/lobby"))
        #expect(!page.secure && page.port == 7480 && page.authority == "127.0.0.1:7480")
        let bare = try #require(WebSocketAddress("ws://[::1]/rooms/lobby"))
        #expect(!bare.secure && bare.host == "::1" && bare.port == 80 && bare.authority == "[::1]:80")
    }

    @Test("a fragment stays the page's, a query straight after the host keeps a path, and other schemes are refused")
    func edges() throws {
        #expect(try #require(WebSocketAddress("https://h/rooms/a#chat")).path == "/rooms/a")
        #expect(try #require(WebSocketAddress("wss://h?name=x")).path == "/?name=x")
        #expect(WebSocketAddress("ftp://h/rooms/a") == nil)
        #expect(WebSocketAddress("https://user@h/rooms/a") == nil)
        #expect(WebSocketAddress("wss://h:0/rooms/a") == nil)
        #expect(WebSocketAddress("wss://[::1/rooms/a") == nil)
    }
}

@Suite("A TLS refusal says which it was")
struct TLSRefusalTests {
    @Test("untrusted, another name, expired and not TLS are told apart, and the untrusted one says what to do")
    func words() {
        let untrusted = TLSRefusal.describe(verifyError: 20, host: "h", port: 443)
        #expect(untrusted.contains("does not trust") && untrusted.contains("--ca-file"))
        #expect(TLSRefusal.describe(verifyError: 62, host: "h", port: 443).contains("certificate for another name, not h"))
        #expect(TLSRefusal.describe(verifyError: 18, host: "h", port: 443).contains("does not trust"))
        #expect(TLSRefusal.describe(verifyError: 10, host: "h", port: 443).contains("expired"))
        #expect(TLSRefusal.describeHandshake(host: "h", port: 7480).contains("did not answer in TLS"))
    }
}
