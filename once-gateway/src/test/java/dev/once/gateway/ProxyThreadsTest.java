package dev.once.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.ByteArrayEndPoint;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.Invocable.InvocationType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * How the proxy's requests are run: where they are parsed, and a keep-alive connection's next one
 * where the previous answer was completed, never handed to another thread.
 */
class ProxyThreadsTest extends GatewayTest {

  private final ProxyThreads threads = new ProxyThreads(8, 1);

  @BeforeAll
  void startThreads() throws Exception {
    threads.start();
  }

  @AfterAll
  void stopThreads() throws Exception {
    threads.stop();
  }

  /**
   * Jetty hands every request to another thread unless the whole handler tree says it never blocks;
   * so does {@link ProxyThreads} with a connection's next request.
   */
  @Test
  void theProxyTellsJettyThatItNeverBlocks() throws Exception {
    assertEquals(InvocationType.NON_BLOCKING, gw.gateway.proxyServer().getInvocationType());
    // Keep-alive requests, each started where the one before it was answered: first requests,
    // replays and unkeyed ones alike.
    for (int i = 0; i < 20; i++) {
      String key = Client.key();
      var first = client.postJson("/charges", key, "{\"n\":" + i + "}");
      assertEquals(201, first.statusCode());
      assertEquals(first.body(), client.postJson("/charges", key, "{\"n\":" + i + "}").body());
      assertEquals(201, client.postJson("/charges", null, "{}").statusCode());
    }
  }

  @Test
  void aConnectionThatNeverBlocksResumesOnTheThreadThatCompletedItsAnswer() throws Exception {
    Resumption resumption = new Resumption(InvocationType.NON_BLOCKING, null);
    threads.execute(resumption);
    assertSame(Thread.currentThread(), resumption.ranOn.getNow(null));
  }

  @Test
  void anythingElseIsHandedToThePool() throws Exception {
    Resumption blocking = new Resumption(InvocationType.BLOCKING, null);
    threads.execute(blocking);
    assertNotSame(Thread.currentThread(), blocking.ranOn.get(10, TimeUnit.SECONDS));

    // Not a connection: whatever it says of itself, it may be a selector's production loop.
    CompletableFuture<Thread> task = new CompletableFuture<>();
    threads.execute(
        Invocable.from(InvocationType.NON_BLOCKING, () -> task.complete(Thread.currentThread())));
    assertNotSame(Thread.currentThread(), task.get(10, TimeUnit.SECONDS));
  }

  /**
   * Resumptions started from within each other run on the thread up to the bound, and the rest on
   * the pool: every one runs, and no thread's stack grows with the chain.
   */
  @Test
  void aChainOfResumptionsIsHandedToThePoolPastTheBound() throws Exception {
    int links = 50;
    List<Resumption> chain = new ArrayList<>();
    for (int i = 0; i < links; i++) {
      chain.add(new Resumption(InvocationType.NON_BLOCKING, null));
    }
    for (int i = 0; i < links - 1; i++) {
      chain.get(i).then = chain.get(i + 1);
    }
    threads.execute(chain.get(0));
    Thread caller = Thread.currentThread();
    for (int i = 0; i < links; i++) {
      Thread ranOn = chain.get(i).ranOn.get(10, TimeUnit.SECONDS);
      if (i < ProxyThreads.MAX_NESTED) {
        assertSame(caller, ranOn, "link " + i);
      }
    }
    assertNotSame(caller, chain.get(ProxyThreads.MAX_NESTED).ranOn.getNow(null));
  }

  /** As in the pool: a resumption that throws is logged, and the completing thread goes on. */
  @Test
  void aResumptionThatThrowsLeavesTheCompletingThreadToItsWork() {
    AtomicInteger after = new AtomicInteger();
    for (Throwable failure :
        new Throwable[] {new IllegalStateException("broken"), new AssertionError("broken")}) {
      Resumption throwing = new Resumption(InvocationType.NON_BLOCKING, failure);
      threads.execute(throwing);
      assertSame(Thread.currentThread(), throwing.ranOn.getNow(null));
      after.incrementAndGet();
    }
    assertEquals(2, after.get());
    assertTrue(threads.isRunning());
  }

  /** A connection that records where it was run, as Jetty's resumes itself through the pool. */
  private final class Resumption extends AbstractConnection implements Runnable {
    final CompletableFuture<Thread> ranOn = new CompletableFuture<>();

    /** The resumption this one starts while it runs, as a completed answer starts its next. */
    volatile Resumption then;

    private final InvocationType type;
    private final Throwable failure;

    Resumption(InvocationType type, Throwable failure) {
      super(new ByteArrayEndPoint(), Runnable::run);
      this.type = type;
      this.failure = failure;
    }

    @Override
    public InvocationType getInvocationType() {
      return type;
    }

    @Override
    public void run() {
      ranOn.complete(Thread.currentThread());
      if (then != null) {
        threads.execute(then);
      }
      if (failure instanceof RuntimeException e) {
        throw e;
      }
      if (failure instanceof Error e) {
        throw e;
      }
    }

    @Override
    public void onFillable() {}
  }
}
