/* The system SQLite (Debian libsqlite3-dev), with the one macro Swift cannot import. */
#ifndef COWATCH_SQLITE_SHIM_H
#define COWATCH_SQLITE_SHIM_H

#include <sqlite3.h>

/* SQLite copies the bound text before the call returns. */
static inline sqlite3_destructor_type cw_sqlite_transient(void) { return SQLITE_TRANSIENT; }

#endif
