/*
 * What Swift cannot import from OpenSSL directly: the macros that set a TLS
 * client's server name (SNI), its write mode and its lowest protocol version.
 */
#ifndef COWATCH_OPENSSL_SHIM_H
#define COWATCH_OPENSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>

/* SSL_set_tlsext_host_name is a macro over SSL_ctrl. */
static inline int cw_ssl_set_server_name(SSL *ssl, const char *name) {
    return (int)SSL_set_tlsext_host_name(ssl, name);
}

/* SSL_set_mode is a macro over SSL_ctrl: partial writes, and retried writes
 * from a buffer that has moved. */
static inline void cw_ssl_allow_partial_writes(SSL *ssl) {
    SSL_set_mode(ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
}

/* SSL_CTX_set_min_proto_version is a macro over SSL_CTX_ctrl. */
static inline int cw_ssl_ctx_require_tls12(SSL_CTX *context) {
    return (int)SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
}

#endif
