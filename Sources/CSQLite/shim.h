#ifndef KINESIA_CSQLITE_SHIM_H
#define KINESIA_CSQLITE_SHIM_H
#include <sqlite3.h>

/// SQLITE_TRANSIENT is a macro casting -1 to a destructor pointer, which Swift cannot import:
/// binding with it makes SQLite copy the bytes before the call returns.
static inline sqlite3_destructor_type kinesia_sqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
