import COpenSSL
import Foundation

/// Whom a client believes when it opens a room over TLS (`wss://`, `https://`).
///
/// Always OpenSSL's default verify paths: the system's trust store (Debian's
/// `ca-certificates`), moved by `SSL_CERT_FILE` and `SSL_CERT_DIR` as for every
/// other program linked against OpenSSL. A private CA's certificates can be added
/// (`caFile`, `--ca-file`); nothing turns verification off, so a client never
/// talks to a server whose certificate it could not check.
public struct ClientTrust: Sendable, Hashable {
    /// PEM files of CA certificates trusted besides the system's store.
    public var caFiles: [String]

    public init(caFile: String? = nil) {
        caFiles = caFile.map { [$0] } ?? []
    }

    public init(caFiles: [String]) {
        self.caFiles = caFiles
    }

    /// The system's store alone.
    public static let system = ClientTrust()

    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// An OpenSSL client context with this trust: TLS 1.2 or later, the peer's
    /// certificate verified. The caller frees it (`SSL_CTX_free`). libwebsockets'
    /// own default looks only in a folder fixed when it was built, which ignores
    /// `SSL_CERT_FILE`; handing it this context keeps one rule for every client.
    func makeContext() throws -> OpaquePointer {
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw Failure(description: "OpenSSL could not make a TLS context")
        }
        guard cw_ssl_ctx_require_tls12(context) == 1, SSL_CTX_set_default_verify_paths(context) == 1 else {
            SSL_CTX_free(context)
            throw Failure(description: "OpenSSL could not load the system's trust store")
        }
        for caFile in caFiles {
            guard FileManager.default.isReadableFile(atPath: caFile) else {
                SSL_CTX_free(context)
                throw Failure(description: "cannot read the CA file \(caFile)")
            }
            guard SSL_CTX_load_verify_locations(context, caFile, nil) == 1 else {
                ERR_clear_error()
                SSL_CTX_free(context)
                throw Failure(description: "\(caFile) holds no PEM certificate OpenSSL can read")
            }
        }
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        return context
    }
}

/// What went wrong with a TLS connection to a room's server, in a sentence for
/// the person who typed the address: which of "not trusted", "not for this name",
/// "expired" or "not TLS at all" it was, and what to do about it.
public enum TLSRefusal {
    /// OpenSSL's certificate verification result (`X509_V_ERR_*`) for `host`;
    /// `certificateNames`, the names the certificate is for; `caFiles`, the CA
    /// files trusted besides the system's store (advice differs once one is given).
    public static func describe(verifyError code: Int32, host: String, port: Int, certificateNames: String? = nil,
                                caFiles: [String] = []) -> String {
        let server = "the server at \(host.contains(":") ? "[\(host)]" : host):\(port)"
        let detail = String(cString: X509_verify_cert_error_string(Int(code)))
        switch code {
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH:
            let names = certificateNames.map { $0.isEmpty ? "" : "; it is for \($0)" } ?? ""
            return "\(server) presented a certificate for another name, not \(host) (\(detail))\(names)"
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN,
             X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT,
             X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE, X509_V_ERR_CERT_UNTRUSTED:
            guard caFiles.isEmpty else {
                return "\(server) presented a certificate this machine does not trust (\(detail)); "
                    + "\(caFiles.joined(separator: ", ")) does not vouch for it either: "
                    + "pass the certificate of the CA that signed the server's"
            }
            return "\(server) presented a certificate this machine does not trust (\(detail)); "
                + "if it comes from a private CA, pass that CA's certificate with --ca-file FILE"
        case X509_V_ERR_CERT_HAS_EXPIRED:
            return "\(server) presented an expired certificate (\(detail))"
        case X509_V_ERR_CERT_NOT_YET_VALID:
            return "\(server) presented a certificate that is not valid yet (\(detail)); check this machine's clock"
        default:
            return "\(server) presented a certificate that could not be verified (\(detail))"
        }
    }

    /// The DNS names and addresses a certificate is for, as one line; nil when it
    /// lists none.
    static func names(of certificate: OpaquePointer) -> String? {
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = buffer.withUnsafeMutableBufferPointer { pointer in
            pointer.baseAddress.map { $0.withMemoryRebound(to: CChar.self, capacity: pointer.count) {
                cw_x509_alt_names(certificate, $0, pointer.count) } } ?? 0
        }
        guard count > 0 else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }, as: UTF8.self)
    }

    /// A TLS handshake that failed before any certificate was judged: most often a
    /// server that speaks plain HTTP on that port. (OpenSSL's own words for it,
    /// "wrong version number" or a bare error number, tell a person nothing.)
    public static func describeHandshake(host: String, port: Int) -> String {
        "\(host.contains(":") ? "[\(host)]" : host):\(port) did not answer in TLS (is it a plain ws:// or http:// server?)"
    }
}
