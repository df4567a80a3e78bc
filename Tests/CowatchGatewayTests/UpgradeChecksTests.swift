import CowatchClient
import CowatchCore
import CowatchStore
import Foundation
import Testing

@Suite("Origins, proxies and media hosts", .serialized)
struct UpgradeChecksTests {
    @Test("a browser upgrade from another site's page is refused with 403; the server's own pages and allowed origins pass")
    func originsAreChecked() throws {
        let server = try TestServer { $0.allowedOrigins = ["https://watch.example.org"] }
        defer { server.stop() }
        let host = "127.0.0.1:\(server.port)"
        func upgrade(_ origin: String?) throws -> String {
            let socket = try RawSocket(port: server.port)
            return try socket.upgrade(path: "/rooms/lobby?name=x", protocolName: "cowatch.v1.json", host: host,
                                      headers: origin.map { ["Origin: \($0)"] } ?? [])
        }
        let foreign = try upgrade("https://evil.example.com")
        #expect(foreign.hasPrefix("HTTP/1.1 403"))
        #expect(try upgrade("http://127.0.0.1:\(server.port + 1)").hasPrefix("HTTP/1.1 403"))
        #expect(try upgrade("http://\(host)").hasPrefix("HTTP/1.1 101"))
        #expect(try upgrade("https://watch.example.org").hasPrefix("HTTP/1.1 101"))
        #expect(try upgrade(nil).hasPrefix("HTTP/1.1 101"))
    }

    @Test("behind a trusted proxy, bans and limits use the address in X-Forwarded-For")
    func trustedProxyAddresses() throws {
        let server = try TestServer { $0.trustedProxies = ["127.0.0.1"] }
        defer { server.stop() }
        func open(_ name: String, from address: String) throws -> RawSocket {
            let socket = try RawSocket(port: server.port)
            let head = try socket.upgrade(path: "/rooms/lobby?name=\(name)", protocolName: "cowatch.v1.json",
                                          headers: ["X-Forwarded-For: 203.0.113.9, \(address)"])
            #expect(head.hasPrefix("HTTP/1.1 101"), "\(name) from \(address): \(head)")
            return socket
        }
        let alice = try server.join(name: "alice")
        let mallory = try open("mallory", from: "10.1.1.1")
        _ = alice.event("participant") { $0.object("participant")?.string("name") == "mallory" }
        alice.send("/kick mallory")
        _ = alice.event("participant-left")
        mallory.close()
        let sameAddress = try open("someone", from: "10.1.1.1")
        let refused = String(decoding: sameAddress.read(until: { String(decoding: $0, as: UTF8.self).contains("\"code\":\"banned\"") }), as: UTF8.self)
        #expect(refused.contains("\"code\":\"banned\""))
        let otherAddress = try open("carol", from: "10.2.2.2")
        _ = alice.event("participant") { $0.object("participant")?.string("name") == "carol" }
        let welcomed = String(decoding: otherAddress.read(until: { String(decoding: $0, as: UTF8.self).contains("\"type\":\"welcome\"") }), as: UTF8.self)
        #expect(welcomed.contains("\"type\":\"welcome\""))
    }

    @Test("with media hosts set, /watch of another host is refused with a clear error")
    func mediaHosts() throws {
        let server = try TestServer { $0.room.mediaHosts = ["media.example.org"] }
        defer { server.stop() }
        let alice = try server.join(name: "alice")
        alice.send("/watch https://elsewhere.example.com/a.mp4")
        let error = try #require(alice.error())
        #expect(error.string("code") == "media-host")
        #expect(error.string("message") == "/watch: this server plays media only from media.example.org, not from elsewhere.example.com")
        alice.send("/watch https://MEDIA.example.org:8443/a.mp4")
        #expect(alice.state("paused") != nil)
    }
}
