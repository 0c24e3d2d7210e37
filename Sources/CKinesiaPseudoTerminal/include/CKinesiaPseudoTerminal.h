#ifndef KINESIA_CKINESIAPSEUDOTERMINAL_H
#define KINESIA_CKINESIAPSEUDOTERMINAL_H
// posix_openpt, grantpt, unlockpt and ptsname_r, which Swift's Glibc module does not export
// (they need _XOPEN_SOURCE): the tests of the serial haptic path use a pseudo-terminal pair.
#include <stddef.h>

/// Opens a new pseudo-terminal: returns the controller's descriptor (close-on-exec) and writes
/// the other side's path (/dev/pts/N) into `path`; -1 with errno set on failure.
int kinesia_open_pseudo_terminal(char *path, size_t size);

#endif
