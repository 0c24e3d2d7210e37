// A tiny allocation counter for the engine benchmark, loaded with LD_PRELOAD.
//
//   gcc -O2 -shared -fPIC -o /tmp/libmalloc_count.so scripts/malloc_count.c
//   LD_PRELOAD=/tmp/libmalloc_count.so kinesia-bench engine
//
// It interposes the allocation entry points of glibc (malloc, calloc, realloc, memalign,
// posix_memalign, aligned_alloc, valloc, pvalloc), counts every call that hands out memory, and
// forwards to glibc's own implementations (`__libc_malloc` and friends, exported by glibc 2.36).
// glibc 2.34 removed `__malloc_hook`, so interposition is the way on Debian 12.
//
// The counters are exported as data symbols; `kinesia-bench` finds them with dlsym and reads
// them around the measured loop:
//
//   kinesia_malloc_count  calls that allocated (malloc, calloc, realloc, the aligned ones)
//   kinesia_malloc_bytes  bytes asked for by those calls
//
// Without the preload the benchmark finds no symbol and reports allocations as null.
#define _GNU_SOURCE
#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <unistd.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void __libc_free(void *pointer);

__attribute__((visibility("default"))) _Atomic uint64_t kinesia_malloc_count = 0;
__attribute__((visibility("default"))) _Atomic uint64_t kinesia_malloc_bytes = 0;

static inline void note(size_t size) {
    atomic_fetch_add_explicit(&kinesia_malloc_count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&kinesia_malloc_bytes, size, memory_order_relaxed);
}

void *malloc(size_t size) {
    note(size);
    return __libc_malloc(size);
}

void *calloc(size_t count, size_t size) {
    note(count * size);
    return __libc_calloc(count, size);
}

void *realloc(void *pointer, size_t size) {
    if (size != 0) note(size);
    return __libc_realloc(pointer, size);
}

void free(void *pointer) { __libc_free(pointer); }

void *memalign(size_t alignment, size_t size) {
    note(size);
    return __libc_memalign(alignment, size);
}

void *aligned_alloc(size_t alignment, size_t size) {
    note(size);
    return __libc_memalign(alignment, size);
}

int posix_memalign(void **out, size_t alignment, size_t size) {
    if (alignment < sizeof(void *) || (alignment & (alignment - 1)) != 0) return EINVAL;
    note(size);
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *out = pointer;
    return 0;
}

void *valloc(size_t size) {
    note(size);
    return __libc_memalign((size_t)sysconf(_SC_PAGESIZE), size);
}

void *pvalloc(size_t size) {
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    note(size);
    return __libc_memalign(page, (size + page - 1) & ~(page - 1));
}
