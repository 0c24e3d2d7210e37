#ifndef KINESIA_CKINESIACRC32C_H
#define KINESIA_CKINESIACRC32C_H
// CRC-32C with the processor's own instruction (SSE 4.2's crc32 on x86-64), which Swift cannot
// emit: eight bytes a cycle instead of the tables' one to two.

#include <stddef.h>
#include <stdint.h>

/// 1 when this processor has the CRC-32C instruction (x86-64 with SSE 4.2), 0 otherwise (then
/// kinesia_crc32c_update must not be called).
int kinesia_crc32c_hardware_available(void);

/// The running CRC-32C state `state` (before the final XOR) updated with `count` bytes at
/// `bytes`, by the processor's instruction.
uint32_t kinesia_crc32c_update(uint32_t state, const void *bytes, size_t count);

#endif
