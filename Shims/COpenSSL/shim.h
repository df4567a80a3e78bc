/*
 * What Swift cannot import from OpenSSL directly: the macros that set a TLS
 * client's server name (SNI), its write mode and its lowest protocol version,
 * and the names a certificate is for (a stack of GENERAL_NAME, walked with
 * macros).
 */
#ifndef COWATCH_OPENSSL_SHIM_H
#define COWATCH_OPENSSL_SHIM_H

#include <openssl/ssl.h>
#include <openssl/err.h>
#include <openssl/x509v3.h>
#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

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

/* The DNS names and IP addresses a certificate's subjectAltName lists, joined
 * by ", " into `out` (cut at `size`); the count of names. For telling a person
 * which names a refused certificate is for. */
static inline int cw_x509_alt_names(X509 *cert, char *out, size_t size) {
    if (size == 0) return 0;
    out[0] = '\0';
    GENERAL_NAMES *names = X509_get_ext_d2i(cert, NID_subject_alt_name, NULL, NULL);
    if (names == NULL) return 0;
    int count = 0;
    size_t used = 0;
    for (int index = 0; index < sk_GENERAL_NAME_num(names); index++) {
        const GENERAL_NAME *name = sk_GENERAL_NAME_value(names, index);
        char text[INET6_ADDRSTRLEN + 2] = "";
        if (name->type == GEN_DNS) {
            const ASN1_IA5STRING *dns = name->d.dNSName;
            snprintf(text, sizeof(text), "%.*s", dns->length > 40 ? 40 : dns->length, (const char *)dns->data);
        } else if (name->type == GEN_IPADD) {
            const ASN1_OCTET_STRING *ip = name->d.iPAddress;
            if (ip->length == 4) inet_ntop(AF_INET, ip->data, text, sizeof(text));
            else if (ip->length == 16) inet_ntop(AF_INET6, ip->data, text, sizeof(text));
        }
        if (text[0] == '\0') continue;
        int written = snprintf(out + used, size - used, "%s%s", count ? ", " : "", text);
        if (written < 0 || (size_t)written >= size - used) break;
        used += (size_t)written;
        count++;
    }
    GENERAL_NAMES_free(names);
    return count;
}

#endif
