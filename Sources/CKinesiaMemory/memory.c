#include "CKinesiaMemory.h"
#include <malloc.h>

int kinesia_malloc_trim(void) { return malloc_trim(0); }
