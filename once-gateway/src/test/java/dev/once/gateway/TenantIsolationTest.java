package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Scope;
import dev.once.tck.Eventually;
import dev.once.tck.RequiredServices;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Tenant isolation at the gateway (docs/security.md): the tenant header's hash scopes every key, so
 * another tenant's use of the same key is another record; on PostgreSQL the rows hold only hashes.
 */
@Timeout(90)
class TenantIsolationTest {

  static final String TENANT_A = "sk_live_gateway_tenant_a";
  static final String TENANT_B = "sk_live_gateway_tenant_b";

  @Test
  void aFirstTenantsRequestInFlightNeitherBlocksNorLeaksToAnotherTenantWithTheSameKey()
      throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      String key = key();
      CompletableFuture<HttpResponse<String>> a =
          gw.client.sendAsync(gw.client.post("/wait/slow/700", key, "{}", "Api-Key", TENANT_A));
      awaitRuns(gw, "/wait/slow/700", 1);

      HttpResponse<String> b =
          gw.client.postJson("/wait/slow/700", key, "{\"other\":true}", "Api-Key", TENANT_B);

      assertThat(b.statusCode()).isEqualTo(201);
      assertThat(b.headers().firstValue("Idempotent-Replayed")).isEmpty();
      assertThat(a.get().statusCode()).isEqualTo(201);
      assertThat(b.body()).isNotEqualTo(a.get().body());
      assertThat(gw.client.postJson("/wait/slow/700", key, "{}", "Api-Key", TENANT_A).body())
          .isEqualTo(a.get().body());
      assertThat(
              gw.client
                  .postJson("/wait/slow/700", key, "{\"other\":true}", "Api-Key", TENANT_B)
                  .body())
          .isEqualTo(b.body());
      assertThat(gw.upstream.runs("/wait/slow/700")).isEqualTo(2);
    }
  }

  @Test
  void onPostgresRowsAreUniqueOnScopeAndKeyAndHoldOnlyTheTenantsHash() throws Exception {
    RequiredServices.requireReachable("PostgreSQL", "127.0.0.1", 5432);
    String table = "once_gateway_iso_" + Long.toHexString(System.nanoTime());
    try (TestGateway gw =
        TestGateway.start(
            "--store",
            "postgres://postgres@127.0.0.1:5432/test",
            "--store-table",
            table,
            "--encryption-keys",
            SecurityTest.K1)) {
      String key = key();
      gw.client.postJson("/payments/iso", key, "{\"amount\":1}", "Api-Key", TENANT_A);
      gw.client.postJson("/payments/iso", key, "{\"amount\":1}", "Api-Key", TENANT_B);
      gw.client.postJson("/payments/iso", key, "{\"amount\":1}", "Api-Key", TENANT_B);

      List<String> scopes = new ArrayList<>();
      List<String> results = new ArrayList<>();
      try (Connection c =
              DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test", "postgres", "");
          Statement st = c.createStatement();
          ResultSet rs =
              st.executeQuery(
                  "SELECT scope, result FROM " + table + " WHERE idem_key = '" + key + "'")) {
        while (rs.next()) {
          scopes.add(rs.getString(1));
          results.add(new String(rs.getBytes(2), StandardCharsets.ISO_8859_1));
        }
      }

      assertThat(scopes)
          .hasSize(2)
          .doesNotHaveDuplicates()
          .anySatisfy(s -> assertThat(s).startsWith(Scope.hash(TENANT_A)))
          .anySatisfy(s -> assertThat(s).startsWith(Scope.hash(TENANT_B)))
          .allSatisfy(s -> assertThat(s).doesNotContain(TENANT_A).doesNotContain(TENANT_B));
      assertThat(results).allSatisfy(r -> assertThat(r).doesNotContain("pay_"));
    } finally {
      try (Connection c =
              DriverManager.getConnection("jdbc:postgresql://127.0.0.1:5432/test", "postgres", "");
          Statement st = c.createStatement()) {
        st.execute("DROP TABLE IF EXISTS " + table + " CASCADE");
        st.execute("DROP SEQUENCE IF EXISTS " + table + "_seq");
      }
    }
  }

  private static void awaitRuns(TestGateway gw, String path, int n) {
    Eventually.assertThat(
        path + " reached the upstream " + n + " time(s)",
        java.time.Duration.ofSeconds(20),
        () -> gw.upstream.runs(path) >= n);
  }
}
