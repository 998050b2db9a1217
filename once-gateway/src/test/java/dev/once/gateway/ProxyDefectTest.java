package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Once;
import dev.once.http.HttpIdempotency;
import dev.once.http.ProblemType;
import dev.once.store.InMemoryStore;
import java.net.InetAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Faults in what forwards a request after its key is claimed. A defect (the forwarder throws) must
 * neither hang the client nor leave the key held by heartbeats for ever: the lease is abandoned
 * (the upstream may have the request) and the client told so. A fault before any byte left (the
 * upstream's name lookup throws an {@code Error}, or the event loops stop while it runs) ends the
 * call as not sent, so the key is free for the retry at once rather than after its lease.
 */
@Timeout(30)
class ProxyDefectTest {

  private final InMemoryStore store = InMemoryStore.create();
  private final Once once = Once.builder(store).build();
  private final AtomicInteger forwards = new AtomicInteger();
  private final List<Server> servers = new ArrayList<>();
  private final List<AutoCloseable> upstreams = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (Server server : servers) {
      server.stop();
    }
    for (AutoCloseable upstream : upstreams) {
      upstream.close();
    }
    once.close();
  }

  @Test
  void aForwarderThatThrowsAnswers500AndAbandonsTheKey() throws Exception {
    Client client =
        start(
            exchange -> {
              forwards.incrementAndGet();
              throw new IllegalStateException("injected: the forwarder failed");
            });
    String key = key();

    HttpResponse<String> first = client.postJson("/payments", key, "{}");
    HttpResponse<String> retry = client.postJson("/payments", key, "{}");

    assertProblem(first, 500, "gateway-failed");
    assertProblem(retry, ProblemType.IN_FLIGHT);
    assertThat(forwards).hasValue(1);
  }

  /**
   * Without the {@code Error} caught where the name is looked up, the call would never end: the
   * client would wait out the upstream timeout and the key its lease, so the retry would be told
   * the first is in flight.
   */
  @Test
  void anErrorOutOfTheNameLookupEndsTheCallAsNotSent() throws Exception {
    try (FakeUpstream upstream = new FakeUpstream()) {
      AtomicInteger lookups = new AtomicInteger();
      Client client =
          start(
              netty(
                  upstream,
                  new NettyLoops(1),
                  host -> {
                    if (lookups.incrementAndGet() == 1) {
                      throw new StackOverflowError("injected: the lookup failed");
                    }
                    return loopback();
                  }));
      String key = key();

      HttpResponse<String> first = client.postJson("/payments/looked-up", key, "{}");
      HttpResponse<String> retry = client.postJson("/payments/looked-up", key, "{}");

      assertProblem(first, 502, "upstream-unreachable");
      assertThat(retry.statusCode()).isEqualTo(201);
      assertThat(upstream.runs("/payments/looked-up")).isEqualTo(1);
    }
  }

  /**
   * The loops stop while the name is looked up (the gateway is stopping): nothing was sent, so the
   * key is released, and another gateway on the same store runs the retry at once.
   */
  @Test
  void loopsStoppedDuringTheNameLookupEndTheCallAsNotSent() throws Exception {
    try (FakeUpstream upstream = new FakeUpstream()) {
      CountDownLatch looking = new CountDownLatch(1);
      CountDownLatch answer = new CountDownLatch(1);
      NettyLoops stopping = new NettyLoops(1);
      Client client =
          start(
              netty(
                  upstream,
                  stopping,
                  host -> {
                    looking.countDown();
                    awaitUninterruptibly(answer);
                    return loopback();
                  }));
      String key = key();

      CompletableFuture<HttpResponse<String>> first =
          client.sendAsync(client.post("/payments/stopped", key, "{}"));
      assertThat(looking.await(10, TimeUnit.SECONDS)).isTrue();
      stopping.close();
      answer.countDown();
      Client other = start(netty(upstream, new NettyLoops(1), host -> loopback()));
      HttpResponse<String> retry = other.postJson("/payments/stopped", key, "{}");

      assertProblem(first.get(10, TimeUnit.SECONDS), 502, "upstream-unreachable");
      assertThat(retry.statusCode()).isEqualTo(201);
      assertThat(upstream.runs("/payments/stopped")).isEqualTo(1);
    }
  }

  /**
   * The Netty core's upstream client on {@code loops}, reaching {@code upstream} by a name that
   * only {@code names} looks up. Its side facing the client is Jetty's, which the loops' stopping
   * leaves standing, so the client still hears how its request ended.
   */
  private NettyUpstream netty(
      FakeUpstream upstream, NettyLoops loops, NettyUpstream.NameLookup names) throws Exception {
    GatewayConfig config =
        GatewayConfig.builder()
            .upstream("http://upstream.test:" + URI.create(upstream.url()).getPort())
            .build();
    NettyUpstream client = NettyUpstream.start(config, loops, names);
    upstreams.add(client);
    upstreams.add(loops);
    return client;
  }

  private static InetAddress[] loopback() throws UnknownHostException {
    return new InetAddress[] {InetAddress.getByName("127.0.0.1")};
  }

  private static void awaitUninterruptibly(CountDownLatch latch) {
    boolean interrupted = false;
    while (true) {
      try {
        latch.await();
        break;
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  private Client start(ProxyHandler.Forwarder forwarder) throws Exception {
    ProxyHandler handler =
        new ProxyHandler(
            HttpIdempotency.builder(once).build(),
            true,
            forwarder,
            new BufferBudget(1 << 20, 1 << 20),
            Duration.ofSeconds(5),
            Forwarding.NONE);
    Server server = new Server();
    servers.add(server);
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(new JettyProxy(handler));
    server.start();
    return new Client(URI.create("http://127.0.0.1:" + connector.getLocalPort()));
  }
}
