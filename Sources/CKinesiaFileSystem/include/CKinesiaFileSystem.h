#ifndef KINESIA_CKINESIAFILESYSTEM_H
#define KINESIA_CKINESIAFILESYSTEM_H
// syncfs, which Swift's Glibc module does not export (it needs _GNU_SOURCE): a journal of many
// streams is made durable with one call for its whole file system instead of one fdatasync
// per stream.

/// syncfs(2) of the file system that holds `descriptor`: 0, or -1 with errno set.
int kinesia_syncfs(int descriptor);

#endif
