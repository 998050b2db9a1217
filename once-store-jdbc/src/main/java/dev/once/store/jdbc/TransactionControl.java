package dev.once.store.jdbc;

/** Who ends the transactions an operation's statements run in. */
enum TransactionControl {
  /** The store: each operation commits on its own (a pooled connection of the store's). */
  OWN,
  /**
   * The caller: the store's statements join the caller's transaction and never end it
   * (transactional mode).
   */
  CALLER,
  /**
   * The connection: operations run in a shared open transaction that the connection commits for
   * many operations at once (the embedded store's group commit); an operation's own atomic units
   * are savepoints, and it returns only once a commit covering it is durable.
   */
  BATCH
}
