// CRC-32C by the SSE 4.2 crc32 instruction, compiled for that instruction set in this function
// only (the rest of the program makes no assumption about the processor); callers check
// kinesia_crc32c_hardware_available first.
#include "CKinesiaCRC32C.h"

#include <string.h>

#if defined(__x86_64__)

int kinesia_crc32c_hardware_available(void) {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") ? 1 : 0;
}

__attribute__((target("sse4.2"))) uint32_t kinesia_crc32c_update(uint32_t state, const void *bytes, size_t count) {
    const unsigned char *p = bytes;
    uint64_t crc = state;
    while (count >= 8) {
        uint64_t word;
        memcpy(&word, p, 8);
        crc = __builtin_ia32_crc32di(crc, word);
        p += 8;
        count -= 8;
    }
    uint32_t crc32 = (uint32_t)crc;
    while (count > 0) {
        crc32 = __builtin_ia32_crc32qi(crc32, *p);
        p += 1;
        count -= 1;
    }
    return crc32;
}

#else

int kinesia_crc32c_hardware_available(void) { return 0; }

uint32_t kinesia_crc32c_update(uint32_t state, const void *bytes, size_t count) {
    (void)bytes;
    (void)count;
    return state;
}

#endif
