package dev.once.chaos;

import java.net.URI;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.Map;

/**
 * A system under test: a server the clients reach on a loopback port, that the harness can crash
 * and restart, over a store it may crash and restart too, and whose effects it can count per
 * operation. Operations are numbered; operation {@code n} moves amount {@code n + 1}, so amounts
 * identify operations in the ledger.
 */
sealed interface Target extends AutoCloseable permits GatewayTarget, PaymentsTarget {

  /** For the table, e.g. {@code gateway/redis (chained upstream)}. */
  String name();

  /** The loopback port the server listens on (the fault proxy forwards to it). */
  int port();

  /** How long a lease lasts: keys of a crashed server stay in flight this long. */
  Duration lease();

  /**
   * The request of operation {@code n} sent to {@code base}; {@code slow} asks for a slow upstream.
   */
  HttpRequest.Builder request(URI base, long n, boolean slow);

  /** Whether {@link #crashAndRestartStore()} restarts a separate store process. */
  boolean hasStoreProcess();

  /** SIGKILL the server process and start it again; returns once it serves again. */
  void crashAndRestart();

  /** SIGKILL the store and start it again; returns once it is up. */
  void crashAndRestartStore();

  /** What the ledger holds, by amount (operation number + 1). */
  Map<Long, Ledger> ledger();

  /**
   * One operation in the ledger.
   *
   * @param effects the effects it had (charges or payments booked)
   * @param deliveries when each request carrying its key reached the ledger ({@link
   *     System#nanoTime()}) with its fencing token; empty where the ledger cannot tell (the
   *     payments example)
   */
  record Ledger(int effects, java.util.List<Delivery> deliveries) {}

  /** A request that reached the ledger: its arrival time and the lease's fencing token. */
  record Delivery(long atNanos, long token) {}

  @Override
  void close();
}
