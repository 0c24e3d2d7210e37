#define _GNU_SOURCE
#include <unistd.h>

#include "CKinesiaFileSystem.h"

int kinesia_syncfs(int descriptor) { return syncfs(descriptor); }
