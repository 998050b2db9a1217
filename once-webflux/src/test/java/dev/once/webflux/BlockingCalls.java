package dev.once.webflux;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import reactor.blockhound.BlockHound;
import reactor.blockhound.BlockingMethod;
import reactor.blockhound.BlockingOperationError;
import reactor.blockhound.integration.BlockHoundIntegration;

/**
 * Installs BlockHound for every test class of this module (registered through {@code
 * META-INF/services}), so that a blocking call on a non-blocking thread (Reactor Netty's and
 * Lettuce's event loops, Reactor's parallel scheduler) throws {@link BlockingOperationError} where
 * it happens, and fails the test it happened in even when the error is swallowed on its way (a 500
 * the test did not look at, an error in a finishing call nobody waits for).
 */
public final class BlockingCalls implements BeforeAllCallback, AfterEachCallback {

  private static final List<String> seen = new ArrayList<>();

  /** What the tests allow besides the integrations Reactor, Netty and Spring ship. */
  private static final BlockHoundIntegration ALLOWED =
      builder ->
          builder
              // The test's logging backend writes to stderr as it logs; an application's logs go
              // through its own (asynchronous) appenders.
              .allowBlockingCallsInside("org.slf4j.simple.SimpleLogger", "write")
              // A blocking store's call is handed to the engine's store executor: the hand-off
              // takes the pool queue's lock for a few instructions, and may park for as long
              // while another thread holds it. It never waits for the store; the call itself runs
              // on the pool. (BlockHound's error thrown inside the lock's acquisition left the
              // queue's lock broken and every later request hung: a test artifact, seen once
              // PostgreSQL ran under this filter.)
              .allowBlockingCallsInside("java.util.concurrent.ThreadPoolExecutor", "execute")
              // Lettuce counts the threads writing to a connection under a lock it takes for a few
              // instructions on every command, on whatever thread sends it (here Reactor Netty's).
              // BlockHound's error thrown inside that lock's acquisition, when two threads sent at
              // once, was caught by Lettuce's own finally, which counted a writer out that it had
              // never counted in: the count stayed negative and every later command on that
              // connection spun forever (a test artifact: RedisWebFluxSemanticsTest hung in CI,
              // the event loop at 100 % in SharedLock.incrementWriters, close() waiting behind it).
              .allowBlockingCallsInside("io.lettuce.core.protocol.SharedLock", "incrementWriters")
              .blockingMethodCallback(BlockingCalls::caught);

  static {
    BlockHound.install(ALLOWED);
  }

  private static void caught(BlockingMethod method) {
    // Where it happened goes into the failure: the error itself may be swallowed on its way.
    StringBuilder where = new StringBuilder();
    StackTraceElement[] stack = new Throwable().getStackTrace();
    for (int i = 0; i < Math.min(stack.length, 40); i++) {
      where.append("\n\tat ").append(stack[i]);
    }
    synchronized (seen) {
      seen.add(method + " on " + Thread.currentThread().getName() + where);
    }
    throw new BlockingOperationError(method);
  }

  /** The blocking calls caught since the last call, which forgets them. */
  static List<String> drain() {
    synchronized (seen) {
      List<String> caught = List.copyOf(seen);
      seen.clear();
      return caught;
    }
  }

  @Override
  public void beforeAll(ExtensionContext context) {
    // Loading this class installed BlockHound; a class that ran before it may have left calls.
    drain();
  }

  @Override
  public void afterEach(ExtensionContext context) {
    List<String> caught = drain();
    if (!caught.isEmpty()) {
      throw new AssertionError("blocking calls on non-blocking threads: " + caught);
    }
  }
}
