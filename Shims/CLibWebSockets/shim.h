/*
 * What Swift cannot import from libwebsockets directly: the LWS_PRE macro,
 * variadic logging, and a timer struct that finds its owner again (and, beside
 * them, a thread's name for the server's send threads). Also libev
 * (Debian libev-dev, which libwebsockets-dev depends on): the server's event
 * loop, which libwebsockets joins through its libev plugin.
 */
#ifndef COWATCH_LWS_SHIM_H
#define COWATCH_LWS_SHIM_H

#include <libwebsockets.h>
#include <ev.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes lws needs before every payload it writes, for the frame header. */
static inline size_t cw_lws_pre(void) { return LWS_PRE; }

/*
 * Names the calling thread as top -H and perf show it (prctl is variadic, and
 * Swift's Glibc does not export pthread_setname_np). At most 15 bytes are kept.
 */
#include <sys/prctl.h>
static inline void cw_name_this_thread(const char *name) { prctl(PR_SET_NAME, (unsigned long)name, 0, 0, 0); }

/* _lws_log is variadic; always log a preformatted string. */
static inline void cw_log(int level, const char *message) { _lws_log(level, "%s\n", message); }

/*
 * An lws timer whose callback can find the Swift object that armed it: the
 * sorted-usec-list element comes first, so lws's pointer is also ours.
 */
typedef struct cw_timer {
    lws_sorted_usec_list_t sul;
    void *owner;
} cw_timer;

static inline void *cw_timer_owner(lws_sorted_usec_list_t *sul) {
    return ((cw_timer *)sul)->owner;
}

/*
 * A complete small HTTP response with extra header lines ("name: value\n" each),
 * a body sent or, for HEAD, only announced by its length, and the connection
 * kept for the next request or closed after this one. Returns what the HTTP
 * callback should return.
 */
static inline int cw_http_respond_with(struct lws *wsi, unsigned int status, const char *reason, const char *content_type,
                                       const char *headers, const unsigned char *body, size_t body_length,
                                       int send_body, int close) {
    unsigned char buffer[LWS_PRE + 4096];
    unsigned char *start = buffer + LWS_PRE, *p = start, *end = buffer + sizeof(buffer) - 1;
    if (lws_add_http_common_headers(wsi, status, content_type, (lws_filepos_t)body_length, &p, end))
        return -1;
    /* libwebsockets 4.1 knows no reason phrase for some codes (421) and writes
     * "HTTP/1.1 421 " with none: put ours in. */
    size_t reason_length = reason ? strlen(reason) : 0;
    unsigned char *line_end = memchr(start, '\r', (size_t)(p - start));
    if (reason_length && line_end && line_end > start && line_end[-1] == ' ' && (size_t)(end - p) > reason_length + 64) {
        memmove(line_end + reason_length, line_end, (size_t)(p - line_end));
        memcpy(line_end, reason, reason_length);
        p += reason_length;
    }
    if (lws_add_http_header_by_token(wsi, WSI_TOKEN_HTTP_CACHE_CONTROL,
                                     (const unsigned char *)"no-store", 8, &p, end))
        return -1;
    const char *line = headers;
    while (line && *line) {
        const char *colon = strchr(line, ':');
        const char *stop = strchr(line, '\n');
        if (!stop)
            stop = line + strlen(line);
        if (!colon || colon > stop || colon - line > 62)
            return -1;
        char name[64];
        memcpy(name, line, (size_t)(colon - line) + 1);
        name[colon - line + 1] = '\0';
        const char *value = colon + 1;
        while (value < stop && *value == ' ')
            value++;
        if (lws_add_http_header_by_name(wsi, (const unsigned char *)name, (const unsigned char *)value,
                                        (int)(stop - value), &p, end))
            return -1;
        line = *stop ? stop + 1 : stop;
    }
    if (close && lws_add_http_header_by_token(wsi, WSI_TOKEN_CONNECTION, (const unsigned char *)"close", 5, &p, end))
        return -1;
    if (lws_finalize_write_http_header(wsi, start, &p, end))
        return -1;
    if (send_body && body_length) {
        unsigned char *payload = malloc(LWS_PRE + body_length);
        if (!payload)
            return -1;
        memcpy(payload + LWS_PRE, body, body_length);
        int written = lws_write(wsi, payload + LWS_PRE, body_length, LWS_WRITE_HTTP_FINAL);
        free(payload);
        if (written < (int)body_length)
            return -1;
    }
    if (close)
        return -1;
    return lws_http_transaction_completed(wsi) ? -1 : 0;
}

/*
 * Answers a connection that libwebsockets handed over as raw bytes (a CONNECT
 * request, or a request its parser gave up on) with a plain refusal; the caller
 * then closes it.
 */
static inline void cw_raw_refuse(struct lws *wsi, const char *response) {
    size_t length = strlen(response);
    unsigned char *payload = malloc(LWS_PRE + length);
    if (!payload)
        return;
    memcpy(payload + LWS_PRE, response, length);
    (void)lws_write(wsi, payload + LWS_PRE, length, LWS_WRITE_RAW);
    free(payload);
}

/*
 * Refuses a WebSocket upgrade with a plain HTTP/1.1 response. At the point an
 * upgrade is confirmed lws has not recorded the request's HTTP version, and its
 * header helpers would answer HTTP/1.0, which WebSocket clients reject.
 */
static inline int cw_http_refuse_upgrade(struct lws *wsi, unsigned int status, const char *reason,
                                         const unsigned char *body, size_t body_length) {
    char head[256];
    int head_length = snprintf(head, sizeof(head),
                               "HTTP/1.1 %u %s\r\ncontent-type: text/plain; charset=utf-8\r\n"
                               "content-length: %zu\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\n"
                               "connection: close\r\n\r\n",
                               status, reason, body_length);
    if (head_length <= 0 || head_length >= (int)sizeof(head))
        return -1;
    unsigned char *payload = malloc(LWS_PRE + (size_t)head_length + body_length);
    if (!payload)
        return -1;
    memcpy(payload + LWS_PRE, head, (size_t)head_length);
    if (body_length)
        memcpy(payload + LWS_PRE + head_length, body, body_length);
    int written = lws_write(wsi, payload + LWS_PRE, (size_t)head_length + body_length, LWS_WRITE_HTTP_HEADERS);
    free(payload);
    return written < 0 ? -1 : 1;
}

#endif
