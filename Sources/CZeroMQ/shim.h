#ifndef KINESIA_CZEROMQ_SHIM_H
#define KINESIA_CZEROMQ_SHIM_H
#include <zmq.h>
#include <errno.h>
#include <sys/stat.h>
#include <sys/types.h>

/// errno of the calling thread, for Swift (errno is a macro in C).
static inline int kinesia_errno(void) { return errno; }

/// libzmq's own error numbers are macros built from ZMQ_HAUSNUMERO where the system lacks them;
/// these constants give Swift their values whatever the platform defines.
static const int kinesia_EAGAIN = EAGAIN;
static const int kinesia_EINTR = EINTR;
static const int kinesia_EINVAL = EINVAL;
static const int kinesia_ENOTSOCK = ENOTSOCK;
static const int kinesia_ENOTSUP = ENOTSUP;
static const int kinesia_EADDRINUSE = EADDRINUSE;
static const int kinesia_EADDRNOTAVAIL = EADDRNOTAVAIL;
static const int kinesia_EPROTONOSUPPORT = EPROTONOSUPPORT;
static const int kinesia_EHOSTUNREACH = EHOSTUNREACH;
static const int kinesia_ENAMETOOLONG = ENAMETOOLONG;
static const int kinesia_ECONNREFUSED = ECONNREFUSED;
static const int kinesia_ENOENT = ENOENT;
static const int kinesia_EMFILE = EMFILE;
static const int kinesia_ETERM = ETERM;
static const int kinesia_EFSM = EFSM;
static const int kinesia_ENOCOMPATPROTO = ENOCOMPATPROTO;
static const int kinesia_EMTHREAD = EMTHREAD;

/// Sets the process umask and returns the previous one (a plain wrapper, so Swift needs no libc
/// module for it).
static inline mode_t kinesia_umask(mode_t mask) { return umask(mask); }

#endif
