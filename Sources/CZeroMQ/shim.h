#ifndef KINESIA_CZEROMQ_SHIM_H
#define KINESIA_CZEROMQ_SHIM_H
#include <zmq.h>
#include <errno.h>

/// errno of the calling thread, for Swift (errno is a macro in C).
static inline int kinesia_errno(void) { return errno; }

#endif
