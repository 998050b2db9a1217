package dev.once.gateway;

import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The proxy server's threads, with one exception to handing work to them: a client connection whose
 * answer another thread has just completed goes on to its next request on that thread.
 *
 * <p>An answer is mostly completed where the exchange ended: on the proxy's selector (which also
 * carries the upstream's connections, {@link ProxyConnector}), on the store's executor or on
 * Redis's event loop. Jetty then resumes the client connection (parse the next request if its bytes
 * are there, else ask the selector to watch for them) by handing it to the server's pool: a wake-up
 * and a context switch per request, the largest cost per request left in the proxy's profile. A
 * connection of the proxy says it never blocks (its handler chain is non-blocking, {@link
 * ProxyHandler}), so the thread that completed the answer runs it instead, as Jetty's own selector
 * would: starting a request ends at its first asynchronous step, so that thread is back at its own
 * work after one request's parsing.
 *
 * <p>Only connections that say they never block run here; every other task (a selector's production
 * loop among them) goes to the pool. So does a resumption started from within others more than
 * {@value #MAX_NESTED} deep on one thread (answers completed while that thread starts a request,
 * e.g. queued exchanges failed at once): a chain of them must not grow a stack without bound.
 */
final class ProxyThreads extends QueuedThreadPool {

  private static final Logger log = LoggerFactory.getLogger(ProxyThreads.class);

  /** How many resumptions one thread may run inside each other before handing one to the pool. */
  static final int MAX_NESTED = 4;

  /** This thread's resumptions in progress. */
  private static final ThreadLocal<int[]> nested = ThreadLocal.withInitial(() -> new int[1]);

  ProxyThreads(int maxThreads, int minThreads) {
    super(maxThreads, minThreads);
  }

  @Override
  public void execute(Runnable task) {
    int[] depth = nested.get();
    if (task instanceof Connection
        && Invocable.getInvocationType(task) == Invocable.InvocationType.NON_BLOCKING
        && depth[0] < MAX_NESTED) {
      depth[0]++;
      try {
        task.run();
      } catch (Throwable failure) {
        // What the pool would do with it: the completing thread has work of its own to go on with.
        log.warn("Resuming a client connection failed: {}", task, failure);
      } finally {
        depth[0]--;
      }
    } else {
      super.execute(task);
    }
  }
}
