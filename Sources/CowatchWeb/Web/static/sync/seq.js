// States are numbered: `seq` increases strictly per room (docs/protocol.md).

/** A state older than the one applied is stale (it crossed a newer one on the
 *  way) and is dropped. The same seq again is not stale: the server hands the
 *  current state back when a member's last suspension ends, and the player
 *  must act on it again. `applied` is null after a welcome, when a restarted
 *  server may count anew. */
export function isStale(applied, incoming) {
  return applied != null && incoming.seq < applied.seq;
}
