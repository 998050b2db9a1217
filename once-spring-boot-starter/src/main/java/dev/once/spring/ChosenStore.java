package dev.once.spring;

import dev.once.internal.Causes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The store Once picked, as an operator would name it: its kind, its address (never a credential)
 * and its namespace within it. Startup logs it once; a store that cannot be reached is reported
 * with it.
 *
 * @param kind "PostgreSQL", "MariaDB", "Redis", ...
 * @param address host, port and database (or the Redis nodes), without user or password
 * @param namespace the table or key prefix that keeps this application's records apart
 */
record ChosenStore(String kind, String address, String namespace) {

  private static final Logger log = LoggerFactory.getLogger(ChosenStore.class);

  ChosenStore withNamespace(String namespace) {
    return new ChosenStore(kind, address, namespace);
  }

  void logChosen() {
    log.info("Once store: {} at {}, {}", kind, address, namespace);
  }

  /** The store could not be reached while opening it; {@code action} says what to change. */
  OnceStoreUnreachableException unreachable(Throwable cause, String action) {
    return new OnceStoreUnreachableException(
        "Once: the "
            + kind
            + " store at "
            + address
            + " is unreachable ("
            + Causes.unreachable(cause)
            + ")",
        action,
        cause);
  }
}
