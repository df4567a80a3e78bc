/* PostgreSQL's client library (Debian libpq-dev), for the PostgreSQL store and the
   cluster's leases: blocking calls, each on a thread of its own (see
   Sources/CowatchStore/PostgresConnection.swift). */
#ifndef COWATCH_LIBPQ_SHIM_H
#define COWATCH_LIBPQ_SHIM_H

#include <libpq-fe.h>

#endif
