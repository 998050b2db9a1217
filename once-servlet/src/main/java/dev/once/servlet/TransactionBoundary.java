package dev.once.servlet;

import dev.once.http.Route;
import jakarta.servlet.ServletException;
import java.io.IOException;

/**
 * Runs the guarded part of a request (the claim, the handler, and the recording of its outcome) in
 * one transaction, so that the claim, the handler's own writes and the recorded response commit or
 * roll back together. {@link OnceFilter} sends the response only after {@link #run} returns, so a
 * client never sees a response whose effects did not commit.
 *
 * <p>The store must take part in the same transaction (with once-store-jdbc, a store view {@code
 * TransactionalStore.on(connection)} over the transaction's connection), and heartbeats must be off
 * for covered routes. Requests on covered routes must not go asynchronous: the transaction is bound
 * to the thread. A transient outcome (or a handler that throws) releases its key by the rollback
 * alone: the filter makes no store call for it, since after a failed statement the transaction may
 * accept none (PostgreSQL), and a claim that never commits is never seen by anyone. The Spring Boot
 * starter supplies an implementation over Spring's transaction manager.
 */
public interface TransactionBoundary {

  /** No route runs in a transaction: every store call commits on its own. */
  TransactionBoundary NONE =
      new TransactionBoundary() {
        @Override
        public boolean covers(Route route) {
          return false;
        }

        @Override
        public void run(Route route, Work work) throws IOException, ServletException {
          work.run();
        }
      };

  /** How the work wants its transaction to end. */
  enum Ending {
    /** The outcome is recorded: keep the claim, the handler's writes and the record. */
    COMMIT,
    /** The outcome is transient, or nothing ran (a replay, a problem): keep nothing. */
    ROLL_BACK
  }

  /** The guarded part of one request. */
  @FunctionalInterface
  interface Work {
    /** Claims, runs the handler and records its outcome; an exception means: roll back. */
    Ending run() throws IOException, ServletException;
  }

  /** Whether requests with a key on this route run in a transaction. */
  boolean covers(Route route);

  /**
   * Begins a transaction, runs the work in it, and commits or rolls back as the work says; if the
   * work throws, rolls back and rethrows the exception unchanged.
   */
  void run(Route route, Work work) throws IOException, ServletException;
}
