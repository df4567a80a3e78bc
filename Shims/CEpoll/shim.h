/*
 * epoll(7), which Swift's Glibc module does not export: for the send floor's
 * reader of bursts (Tools/SendFloor), which reads as the load generator's
 * clients do, woken for what is ready rather than scanning every socket.
 */
#ifndef COWATCH_EPOLL_SHIM_H
#define COWATCH_EPOLL_SHIM_H

#include <sys/epoll.h>

#endif
