/*
 * RFC 6455 requires every frame a client sends to be masked, and a server to
 * fail a connection whose frames are not. libwebsockets 4.1 (Debian's) reads an
 * unmasked frame as if masked with zeros and says nothing of it through its API.
 * So the server looks at the frame headers itself, in the bytes libwebsockets
 * reads from the sockets the gateway names, and remembers a socket on which a
 * frame came unmasked; the gateway then closes that connection with 1002.
 */
#ifndef COWATCH_FRAME_GUARD_H
#define COWATCH_FRAME_GUARD_H

#include <stddef.h>
#include <stdint.h>

/* Where a scan stands in a client's stream of frames. */
typedef struct cw_frame_scan {
    uint8_t stage;      /* 0: first header byte, 1: mask bit and length, 2: extended length, 3: mask key, 4: payload */
    uint8_t need;       /* bytes still to come in stages 2 and 3 */
    uint8_t unmasked;   /* a frame arrived without a mask */
    uint64_t remaining; /* the payload still to pass over (in stage 2, the length being read) */
} cw_frame_scan;

/* Follows `count` more bytes of the stream; pure, for the tests too. */
void cw_frame_scan_feed(cw_frame_scan *scan, const uint8_t *bytes, size_t count);

/* Starts following a socket's frames; its next byte begins a frame. */
void cw_frame_guard_watch(int fd);
void cw_frame_guard_forget(int fd);
/* 1 once a frame on a watched socket arrived unmasked. */
int cw_frame_guard_unmasked(int fd);

#endif
