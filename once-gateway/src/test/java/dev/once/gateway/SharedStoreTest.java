package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.tck.RequiredServices;
import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Two gateway instances on one shared store, in front of one upstream: a duplicate sent to each
 * runs once.
 */
@Timeout(120)
class SharedStoreTest {

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgres://postgres@127.0.0.1:5432/test", "redis://127.0.0.1:6379"})
  void aDuplicateSentToEachInstanceRunsOnceUpstream(String store) throws Exception {
    RequiredServices.requireReachable(
        store.startsWith("redis") ? "Redis" : "PostgreSQL",
        "127.0.0.1",
        store.startsWith("redis") ? 6379 : 5432);
    // A table of this run's own: other worktrees' builds share the server.
    String table = "once_gateway_test_" + Long.toHexString(System.nanoTime());
    try (TestGateway a = TestGateway.start("--store", store, "--store-table", table);
        TestGateway b =
            TestGateway.start(
                "--store", store, "--store-table", table, "--upstream", a.upstream.url())) {
      String key = key();

      HttpResponse<String> first = a.client.postJson("/payments/shared", key, "{\"amount\":5}");
      HttpResponse<String> retryElsewhere =
          b.client.postJson("/payments/shared", key, "{\"amount\":5}");

      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(retryElsewhere.body()).isEqualTo(first.body());
      assertThat(retryElsewhere.headers().firstValue("Idempotent-Replayed")).contains("true");
      assertThat(a.upstream.runs("/payments/shared")).isEqualTo(1);

      String herdKey = key();
      List<CompletableFuture<HttpResponse<String>>> herd = new ArrayList<>();
      for (int i = 0; i < 10; i++) {
        Client via = i % 2 == 0 ? a.client : b.client;
        herd.add(via.sendAsync(via.post("/wait/slow/300", herdKey, "{}")));
      }
      List<String> bodies = new ArrayList<>();
      for (CompletableFuture<HttpResponse<String>> r : herd) {
        assertThat(r.get().statusCode()).isEqualTo(201);
        bodies.add(r.get().body());
      }
      assertThat(bodies).containsOnly(bodies.get(0));
      assertThat(a.upstream.runs("/wait/slow/300")).isEqualTo(1);
    } finally {
      if (store.startsWith("postgres")) {
        dropTable(table);
      }
    }
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"postgres://postgres@127.0.0.1:5432/test", "redis://127.0.0.1:6379"})
  void gatewaysWithTheirOwnNamespacesOnOneStoreNeverReplayEachOthersResponses(String store)
      throws Exception {
    RequiredServices.requireReachable(
        store.startsWith("redis") ? "Redis" : "PostgreSQL",
        "127.0.0.1",
        store.startsWith("redis") ? 6379 : 5432);
    String tableA = "once_gateway_a_" + Long.toHexString(System.nanoTime());
    String tableB = "once_gateway_b_" + Long.toHexString(System.nanoTime());
    try (TestGateway a = TestGateway.start("--store", store, "--store-table", tableA);
        TestGateway b = TestGateway.start("--store", store, "--store-table", tableB)) {
      String key = key();

      HttpResponse<String> first = a.client.postJson("/payments/namespaced", key, "{\"amount\":5}");
      HttpResponse<String> other = b.client.postJson("/payments/namespaced", key, "{\"amount\":5}");

      assertThat(first.statusCode()).isEqualTo(201);
      assertThat(other.statusCode()).isEqualTo(201);
      assertThat(other.headers().firstValue("Idempotent-Replayed")).isEmpty();
      assertThat(a.upstream.runs("/payments/namespaced")).isEqualTo(1);
      assertThat(b.upstream.runs("/payments/namespaced")).isEqualTo(1);
    } finally {
      if (store.startsWith("postgres")) {
        dropTable(tableA);
        dropTable(tableB);
      }
    }
  }

  private static void dropTable(String table) throws Exception {
    try (java.sql.Connection c =
            java.sql.DriverManager.getConnection(
                "jdbc:postgresql://127.0.0.1:5432/test", "postgres", "");
        java.sql.Statement st = c.createStatement()) {
      st.execute("DROP TABLE IF EXISTS " + table + " CASCADE");
      st.execute("DROP SEQUENCE IF EXISTS " + table + "_seq");
    }
  }
}
