package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An upstream named by a host name rather than an address: the name is looked up when a connection
 * opens (off the event loops on the Netty core), and a name that does not resolve fails the request
 * as never sent, so its key is released. A name with several addresses is reached at the first that
 * accepts a connection.
 */
class UpstreamNameTest {

  @Test
  void anUpstreamNamedByAHostNameIsLookedUpAndReached() throws Exception {
    try (FakeUpstream named = new FakeUpstream();
        TestGateway gw =
            TestGateway.start(
                "--upstream", "http://localhost:" + URI.create(named.url()).getPort())) {
      String key = key();

      HttpResponse<String> first = gw.client.postJson("/payments/named", key, "{}");
      HttpResponse<String> again = gw.client.postJson("/payments/named", key, "{}");

      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
      assertThat(named.runs("/payments/named")).isEqualTo(1);
    }
  }

  /**
   * A name with two addresses, the first refusing connections: the upstream is reached at the
   * second, as Jetty's client reaches it. The names come from a hosts file of the test's own, given
   * to a gateway process of its own ({@code jdk.net.hosts.file} is read once per JVM).
   */
  @Test
  void aNameWithSeveralAddressesIsReachedAtTheFirstThatAccepts(@TempDir Path dir) throws Exception {
    try (FakeUpstream upstream = new FakeUpstream()) {
      // The upstream listens on 127.0.0.1 alone, so 127.0.0.2 (loopback too) refuses.
      Path hosts =
          Files.writeString(dir.resolve("hosts"), "127.0.0.2 twice.test\n127.0.0.1 twice.test\n");
      List<String> args =
          TestGateway.args(
              "http://twice.test:" + URI.create(upstream.url()).getPort(),
              dir,
              // One connection at a time, closed when idle: every request below opens a new one,
              // past the refusing address, and a permit lost on the way would stall the next.
              "--upstream-max-connections",
              "1",
              "--upstream-idle-timeout",
              "100ms");
      try (ChildGateway gw =
          ChildGateway.start("256m", List.of("-Djdk.net.hosts.file=" + hosts), args)) {
        Client client = new Client(gw.uri());
        String key = key();

        HttpResponse<String> first = client.postJson("/payments/twice", key, "{}");
        HttpResponse<String> again = client.postJson("/payments/twice", key, "{}");

        assertThat(first.statusCode()).isEqualTo(201);
        assertThat(again.headers().firstValue("Idempotent-Replayed")).hasValue("true");
        assertThat(upstream.runs("/payments/twice")).isEqualTo(1);
        for (int i = 0; i < 3; i++) {
          Thread.sleep(300);
          assertThat(client.postJson("/payments/again-" + i, key(), "{}").statusCode())
              .isEqualTo(201);
        }
      }
    }
  }

  @Test
  void aNameThatDoesNotResolveReleasesTheKey() throws Exception {
    // .invalid never resolves (RFC 6761).
    try (TestGateway gw = TestGateway.start("--upstream", "http://once-upstream.invalid:8080")) {
      String key = key();

      HttpResponse<String> first = gw.client.postJson("/payments/nowhere", key, "{}");
      HttpResponse<String> retry = gw.client.postJson("/payments/nowhere", key, "{}");

      assertProblem(first, 502, "upstream-unreachable");
      assertProblem(retry, 502, "upstream-unreachable");
    }
  }
}
