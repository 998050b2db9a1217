package dev.once.servlet;

import static dev.once.servlet.GuardedApp.key;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Scope;
import dev.once.store.IdempotencyRecord;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;

/**
 * Tenant isolation at the servlet filter (docs/security.md): the same key from another tenant
 * (another {@code Api-Key}) is another record, whose answer never reveals, replays or waits for the
 * first's.
 */
class TenantIsolationTest extends GuardedAppTest {

  static final String TENANT_A = "sk_live_tenant_a_secret";
  static final String TENANT_B = "sk_live_tenant_b_secret";

  @Test
  void theSameKeyFromTwoTenantsRunsForEachAndReplaysEachItsOwn() throws Exception {
    String key = key();
    HttpResponse<String> a =
        shop.postJson("/api/payments/iso-1", key, "{\"amount\":1}", "Api-Key", TENANT_A);
    HttpResponse<String> b =
        shop.postJson("/api/payments/iso-1", key, "{\"amount\":1}", "Api-Key", TENANT_B);

    assertThat(b.statusCode()).isEqualTo(201);
    assertThat(b.headers().firstValue("Idempotent-Replayed")).isEmpty();
    assertThat(b.body()).isNotEqualTo(a.body());
    assertThat(
            shop.postJson("/api/payments/iso-1", key, "{\"amount\":1}", "Api-Key", TENANT_A).body())
        .isEqualTo(a.body());
    assertThat(
            shop.postJson("/api/payments/iso-1", key, "{\"amount\":1}", "Api-Key", TENANT_B).body())
        .isEqualTo(b.body());
    assertThat(shop.app.executions("/api/payments/iso-1")).isEqualTo(2);
  }

  @Test
  void anotherTenantsDifferentBodyIsNotAConflictSoAKeysExistenceNeverLeaks() throws Exception {
    String key = key();
    shop.postJson("/api/payments/iso-2", key, "{\"amount\":1}", "Api-Key", TENANT_A);

    HttpResponse<String> other =
        shop.postJson("/api/payments/iso-2", key, "{\"amount\":999}", "Api-Key", TENANT_B);

    assertThat(other.statusCode()).isEqualTo(201);
  }

  @Test
  void aFirstTenantsRequestInFlightNeverBlocksAnotherTenantWithTheSameKey() throws Exception {
    String key = key();
    CompletableFuture<HttpResponse<String>> a =
        shop.client.sendAsync(
            shop.post("/api/slow?ms=1500", key, "{}", "Api-Key", TENANT_A).build(),
            HttpResponse.BodyHandlers.ofString());
    shop.awaitExecutions("/api/slow", 1);

    HttpResponse<String> b = shop.postJson("/api/slow?ms=1", key, "{}", "Api-Key", TENANT_B);

    assertThat(b.statusCode()).isEqualTo(201);
    assertThat(a.get().statusCode()).isEqualTo(201);
    assertThat(b.body()).isNotEqualTo(a.get().body());
  }

  @Test
  void recordsAreUniqueOnScopeAndKeyAndScopesHoldOnlyTheCredentialsHash() throws Exception {
    String key = key();
    shop.postJson("/api/payments/iso-3", key, "{}", "Api-Key", TENANT_A);
    shop.postJson("/api/payments/iso-3", key, "{}", "Api-Key", TENANT_B);
    shop.postJson("/api/payments/iso-3", key, "{}", "Api-Key", TENANT_B);

    List<IdempotencyRecord> records =
        shop.store.live().stream().filter(r -> r.id().key().value().equals(key)).toList();

    assertThat(records).hasSize(2);
    assertThat(records)
        .extracting(r -> r.id().scope().value())
        .doesNotHaveDuplicates()
        .anySatisfy(s -> assertThat(s).startsWith(Scope.hash(TENANT_A) + "/"))
        .anySatisfy(s -> assertThat(s).startsWith(Scope.hash(TENANT_B) + "/"))
        .allSatisfy(s -> assertThat(s).doesNotContain(TENANT_A).doesNotContain(TENANT_B));
  }
}
