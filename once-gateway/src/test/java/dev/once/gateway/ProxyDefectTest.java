package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Once;
import dev.once.http.HttpIdempotency;
import dev.once.http.ProblemType;
import dev.once.store.InMemoryStore;
import java.net.URI;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A defect after the key is claimed (what forwards the request throws) must neither hang the client
 * nor leave the key held by heartbeats for ever: the lease is abandoned (the upstream may have the
 * request) and the client told so.
 */
@Timeout(30)
class ProxyDefectTest {

  private final InMemoryStore store = InMemoryStore.create();
  private final Once once = Once.builder(store).build();
  private final AtomicInteger forwards = new AtomicInteger();
  private Server server;

  @AfterEach
  void stop() throws Exception {
    if (server != null) {
      server.stop();
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

  private Client start(ProxyHandler.Forwarder forwarder) throws Exception {
    ProxyHandler handler =
        new ProxyHandler(
            HttpIdempotency.builder(once).build(),
            true,
            forwarder,
            new BufferBudget(1 << 20, 1 << 20),
            Duration.ofSeconds(5),
            Forwarding.NONE);
    server = new Server();
    ServerConnector connector = new ServerConnector(server);
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    server.setHandler(new JettyProxy(handler));
    server.start();
    return new Client(URI.create("http://127.0.0.1:" + connector.getLocalPort()));
  }
}
