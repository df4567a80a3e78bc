/*
 * See include/frame_guard.h. libwebsockets reads every socket with recv(2)
 * (its lws_ssl_capable_read_no_ssl), so this file defines recv: the
 * executable's definition is the one the library binds to. It makes the system
 * call itself and, only for sockets the gateway watches, follows the frame
 * headers in what was read. Every other caller (the database, the link check)
 * gets the plain system call.
 */
#define _GNU_SOURCE
#include "frame_guard.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

void cw_frame_scan_feed(cw_frame_scan *scan, const uint8_t *bytes, size_t count) {
    size_t i = 0;
    while (i < count && !scan->unmasked) {
        switch (scan->stage) {
        case 0:
            i++;
            scan->stage = 1;
            break;
        case 1: {
            uint8_t byte = bytes[i++];
            if (!(byte & 0x80)) {
                scan->unmasked = 1;
                return;
            }
            uint8_t length = byte & 0x7f;
            scan->remaining = 0;
            if (length >= 126) {
                scan->stage = 2;
                scan->need = length == 126 ? 2 : 8;
            } else {
                scan->remaining = length;
                scan->stage = 3;
                scan->need = 4;
            }
            break;
        }
        case 2:
            scan->remaining = (scan->remaining << 8) | bytes[i++];
            if (--scan->need == 0) {
                scan->stage = 3;
                scan->need = 4;
            }
            break;
        case 3:
            i++;
            if (--scan->need == 0)
                scan->stage = scan->remaining ? 4 : 0;
            break;
        default: {
            size_t take = count - i;
            if (take > scan->remaining)
                take = (size_t)scan->remaining;
            i += take;
            scan->remaining -= take;
            if (!scan->remaining)
                scan->stage = 0;
            break;
        }
        }
    }
}

/* One slot per descriptor number, made once, as large as the descriptor limit
 * then in force (the server raises it before it accepts anything). */
static cw_frame_scan *scans;
static _Atomic uint8_t *watched;
static _Atomic size_t slots;
static pthread_once_t made = PTHREAD_ONCE_INIT;

static void make_slots(void) {
    struct rlimit limit;
    size_t wanted = 65536;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < (1u << 22))
        wanted = (size_t)limit.rlim_cur;
    cw_frame_scan *made_scans = calloc(wanted, sizeof(cw_frame_scan));
    _Atomic uint8_t *made_watched = calloc(wanted, sizeof(_Atomic uint8_t));
    if (!made_scans || !made_watched) {
        free(made_scans);
        free(made_watched);
        return;
    }
    scans = made_scans;
    watched = made_watched;
    atomic_store_explicit(&slots, wanted, memory_order_release);
}

void cw_frame_guard_watch(int fd) {
    pthread_once(&made, make_slots);
    if (fd < 0 || (size_t)fd >= atomic_load_explicit(&slots, memory_order_acquire))
        return;
    scans[fd] = (cw_frame_scan){0};
    atomic_store_explicit(&watched[fd], 1, memory_order_release);
}

void cw_frame_guard_forget(int fd) {
    if (fd < 0 || (size_t)fd >= atomic_load_explicit(&slots, memory_order_acquire))
        return;
    atomic_store_explicit(&watched[fd], 0, memory_order_release);
}

int cw_frame_guard_unmasked(int fd) {
    if (fd < 0 || (size_t)fd >= atomic_load_explicit(&slots, memory_order_acquire) ||
        !atomic_load_explicit(&watched[fd], memory_order_acquire))
        return 0;
    return scans[fd].unmasked;
}

ssize_t recv(int fd, void *buffer, size_t length, int flags) {
    ssize_t count = syscall(SYS_recvfrom, fd, buffer, length, flags, NULL, NULL);
    if (count > 0 && !(flags & MSG_PEEK) && fd >= 0 && (size_t)fd < atomic_load_explicit(&slots, memory_order_acquire) &&
        atomic_load_explicit(&watched[fd], memory_order_acquire))
        cw_frame_scan_feed(&scans[fd], buffer, (size_t)count);
    return count;
}
