package dev.once.gateway;

import dev.once.InFlightPolicy;
import dev.once.OnceEvent;
import dev.once.OnceListener;
import dev.once.Outcome;
import dev.once.Recording;
import dev.once.http.Exchange;
import dev.once.http.Route;
import dev.once.http.StoredResponse;
import dev.once.store.RecordId;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The only threads that call the store. Store calls block (a claim is a round trip, a wait-mode
 * duplicate waits for the first), so they run here, on small fixed pools, and never on a Jetty
 * thread that serves connections. Three pools, so that a herd of duplicates parked in a wait-mode
 * {@code begin} (up to {@code max-wait} each) holds neither the threads that begin other requests
 * nor those that would finish the request the herd waits for. None refuses work: what waits in
 * their queues is one task per exchange in flight at most, and the bodies those hold are within the
 * {@link BufferBudget}.
 *
 * <p>It also reports every finished exchange as {@link OnceEvent.Executed}, which the engine only
 * emits for {@code Once.execute}: without it {@code once_executions_total} would stay at zero.
 */
final class StoreCalls implements AutoCloseable {

  private static final Logger log = LoggerFactory.getLogger(StoreCalls.class);

  /** How one guarded exchange ends; each is one of {@link Exchange}'s finishing calls. */
  @FunctionalInterface
  interface Ending extends Function<Exchange, Exchange.Recorded> {}

  /** Records the response, or releases the key if the route calls its status transient. */
  static Ending record(StoredResponse response) {
    return exchange -> exchange.record(response);
  }

  /** Done with a response that was streamed and not kept; a transient status still releases the key. */
  static Ending streamed(int status) {
    return exchange -> exchange.recordUnavailable(status);
  }

  /** Done, but its response is lost (the client went away, or it cannot be delivered): never released. */
  static final Ending UNAVAILABLE = exchange -> new Exchange.Recorded(Outcome.COMPLETED, exchange.recordUnavailable());

  /** Nothing reached the upstream: a retry may run it afresh. */
  static final Ending NOT_SENT = exchange -> new Exchange.Recorded(Outcome.TRANSIENT, exchange.fail());

  /** The upstream may have acted: the key stays in progress until its lease ends. */
  static final Ending AMBIGUOUS = exchange -> {
    exchange.abandon();
    return new Exchange.Recorded(Outcome.TRANSIENT, Recording.UNKNOWN);
  };

  private final ThreadPoolExecutor begins;
  private final ThreadPoolExecutor waits;
  private final ThreadPoolExecutor finishes;
  private final OnceListener listener;

  StoreCalls(int threads, OnceListener listener) {
    this.begins = pool("once-store-begin-", threads);
    this.waits = pool("once-store-wait-", threads);
    this.finishes = pool("once-store-finish-", threads);
    this.listener = listener;
  }

  private static ThreadPoolExecutor pool(String name, int threads) {
    AtomicInteger n = new AtomicInteger();
    return new ThreadPoolExecutor(threads, threads, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(), r -> {
      Thread t = new Thread(r, name + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    });
  }

  /**
   * Runs {@code begin} for a request on {@code route}: on the wait pool if the route holds
   * duplicates until the first finishes, else on the begin pool; false if the gateway is stopping.
   */
  boolean begin(Route route, Runnable begin) {
    return run(route.policy().execution().inFlight() instanceof InFlightPolicy.Wait ? waits : begins, begin);
  }

  private static boolean run(ThreadPoolExecutor pool, Runnable call) {
    try {
      pool.execute(call);
      return true;
    } catch (RejectedExecutionException e) {
      return false;
    }
  }

  /**
   * Finishes the exchange with {@code ending} on a store thread, then runs {@code then}, whatever
   * the store did. If the gateway is stopping, the lease is abandoned where it is: that needs no
   * store call, and it is the one ending that is safe without knowing more.
   */
  void finish(Exchange exchange, long startedNanos, Ending ending, Runnable then) {
    if (!run(finishes, () -> finishNow(exchange, startedNanos, ending, then))) {
      exchange.abandon();
      then.run();
    }
  }

  private void finishNow(Exchange exchange, long startedNanos, Ending ending, Runnable then) {
    try {
      Exchange.Recorded recorded = ending.apply(exchange);
      listener.onEvent(new OnceEvent.Executed(RecordId.of(exchange.scope(), exchange.key()), recorded.outcome(),
          recorded.recording(), System.nanoTime() - startedNanos));
    } catch (RuntimeException e) {
      // Exchange settles the lease before anything can throw; a listener's bug must not lose the answer.
      log.error("finishing the exchange of key {} threw", exchange.key(), e);
    } finally {
      then.run();
    }
  }

  @Override
  public void close() {
    stop(begins);
    stop(waits);
    stop(finishes);
  }

  private static void stop(ThreadPoolExecutor pool) {
    pool.shutdown();
    try {
      if (!pool.awaitTermination(10, TimeUnit.SECONDS)) {
        pool.shutdownNow();
      }
    } catch (InterruptedException e) {
      pool.shutdownNow();
      Thread.currentThread().interrupt();
    }
  }
}
