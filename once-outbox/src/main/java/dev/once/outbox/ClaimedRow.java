package dev.once.outbox;

/**
 * A row a relay holds the claim on: its primary key, and the attempt number that fences its writes.
 */
record ClaimedRow(long rowId, PendingMessage pending) {

  int attempt() {
    return pending.attempt();
  }
}
