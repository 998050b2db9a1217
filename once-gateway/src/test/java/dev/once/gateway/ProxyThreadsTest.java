package dev.once.gateway;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.once.tck.RequiredServices;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.ByteArrayEndPoint;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.Invocable.InvocationType;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

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
    assertTrue(gw.gateway.proxyServer().getThreadPool() instanceof ProxyThreads);
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

  /**
   * The upstream client connects through the proxy connector's selectors, so one thread serves both
   * connections of an exchange; the upstream's connections are not the connector's own, so they are
   * neither counted among its clients nor closed by its graceful close.
   */
  @Test
  void upstreamConnectionsRideTheProxySelectorsWithoutCountingAsClients() throws Exception {
    try (TestGateway gateway = TestGateway.start()) {
      for (int i = 0; i < 5; i++) {
        assertEquals(201, gateway.client.postJson("/charges", null, "{}").statusCode());
      }
      ProxyConnector connector = (ProxyConnector) gateway.gateway.proxyServer().getConnectors()[0];
      int keys = 0;
      for (ManagedSelector selector : connector.selectors().getBeans(ManagedSelector.class)) {
        keys += selector.size();
      }
      Collection<EndPoint> own = connector.getConnectedEndPoints();
      assertFalse(own.isEmpty(), "the client's keep-alive connection");
      assertTrue(
          own.stream().noneMatch(e -> e instanceof UpstreamEndPoint),
          "upstream connections among the connector's own: " + own);
      assertTrue(
          keys > own.size(),
          "the selectors carry " + keys + " channels: the clients' " + own.size() + " only");
    }
  }

  /**
   * Copies of a few keys' requests pipelined on several connections at once: each connection's next
   * request is already in its buffer when an answer completes, so it starts on the thread that
   * completed it (the proxy's selector, the store's executor, Redis's event loop), where copies of
   * the same key from other connections meet it. Each key still runs once upstream, and every copy
   * gets that first answer or 409.
   */
  @ParameterizedTest(name = "{0}")
  @ValueSource(
      strings = {"embedded", "postgres://postgres@127.0.0.1:5432/test", "redis://127.0.0.1:6379"})
  void aHerdPipelinedOnKeepAliveConnectionsRunsEachKeyOnce(String store) throws Exception {
    if (!store.equals("embedded")) {
      RequiredServices.requireReachable(
          store.startsWith("redis") ? "Redis" : "PostgreSQL",
          "127.0.0.1",
          store.startsWith("redis") ? 6379 : 5432);
    }
    int connections = 8;
    int keys = 4;
    int copies = 3;
    List<String> paths = new ArrayList<>();
    Map<String, String> keyOf = new HashMap<>();
    for (int k = 0; k < keys; k++) {
      String path = "/payments/pipelined-" + UUID.randomUUID();
      paths.add(path);
      keyOf.put(path, Client.key());
    }
    String table = "once_gateway_test_" + Long.toHexString(System.nanoTime());
    try (TestGateway gateway =
        store.equals("embedded")
            ? TestGateway.start()
            : TestGateway.start("--store", store, "--store-table", table)) {
      List<CompletableFuture<List<String[]>>> answers = new ArrayList<>();
      for (int c = 0; c < connections; c++) {
        List<String> order = new ArrayList<>();
        for (String path : paths) {
          for (int i = 0; i < copies; i++) {
            order.add(path);
          }
        }
        Collections.shuffle(order, new Random(c));
        answers.add(
            CompletableFuture.supplyAsync(() -> pipeline(gateway.gateway.port(), order, keyOf)));
      }
      Map<String, Set<String>> firstBodies = new HashMap<>();
      for (CompletableFuture<List<String[]>> connection : answers) {
        for (String[] answer : connection.get(60, TimeUnit.SECONDS)) {
          String path = answer[0];
          int status = Integer.parseInt(answer[1]);
          assertTrue(status == 201 || status == 409, path + " answered " + status);
          if (status == 201) {
            firstBodies.computeIfAbsent(path, p -> new HashSet<>()).add(answer[2]);
          }
        }
      }
      for (String path : paths) {
        assertEquals(1, gateway.upstream.runs(path), "runs of " + path);
        assertEquals(1, firstBodies.get(path).size(), "answers of " + path);
      }
    }
  }

  /** Writes every request at once on one connection, then reads the answers: path, status, body. */
  private static List<String[]> pipeline(int port, List<String> paths, Map<String, String> keyOf) {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(30_000);
      ByteArrayOutputStream requests = new ByteArrayOutputStream();
      for (String path : paths) {
        requests.write(Client.rawPost(path, keyOf.get(path), 2, "{}"));
      }
      OutputStream out = socket.getOutputStream();
      out.write(requests.toByteArray());
      out.flush();
      DataInputStream in = new DataInputStream(socket.getInputStream());
      List<String[]> answers = new ArrayList<>();
      for (String path : paths) {
        String status = line(in).split(" ")[1];
        int length = -1;
        for (String field = line(in); !field.isEmpty(); field = line(in)) {
          if (field.regionMatches(true, 0, "Content-Length:", 0, 15)) {
            length = Integer.parseInt(field.substring(15).trim());
          }
        }
        if (length < 0) {
          throw new IOException(path + ": an answer without Content-Length");
        }
        byte[] body = new byte[length];
        in.readFully(body);
        answers.add(new String[] {path, status, new String(body, StandardCharsets.UTF_8)});
      }
      return answers;
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static String line(DataInputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    for (int b = in.read(); b != '\n'; b = in.read()) {
      if (b < 0) {
        throw new IOException("the connection closed mid-answer");
      }
      if (b != '\r') {
        line.append((char) b);
      }
    }
    return line.toString();
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
