#ifndef KINESIA_CKINESIAMEMORY_H
#define KINESIA_CKINESIAMEMORY_H
// glibc's malloc_trim, which Swift's Glibc module does not export (it is declared in
// <malloc.h>, outside the module): a server gives back the heap that many connections freed.

/// Returns the free memory of every malloc arena to the system (malloc_trim(0)): 1 if some was
/// released, 0 if none could be.
int kinesia_malloc_trim(void);

#endif
