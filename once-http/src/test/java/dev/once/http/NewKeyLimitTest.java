package dev.once.http;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.IdempotencyKey;
import dev.once.Once;
import dev.once.Scope;
import dev.once.store.InMemoryStore;
import dev.once.store.RecordId;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The per-tenant limit on new records: a token bucket that never limits replays. */
class NewKeyLimitTest {

  private final AtomicLong nanos = new AtomicLong(1_000_000_000L);
  private final InMemoryStore store = InMemoryStore.create();
  private final Once once = Once.of(store);
  private final HttpIdempotency http =
      HttpIdempotency.builder(once)
          .newKeyLimit(NewKeyLimit.perSecond(2).burst(3).nanoClock(nanos::get).build())
          .build();
  private int keys;

  @AfterEach
  void close() {
    once.close();
  }

  @Test
  void aTenantMayCreateABurstThenIsToldWhenToRetryAndNothingIsStored() {
    for (int i = 0; i < 3; i++) {
      proceedAndFinish("tenant-a", newKey());
    }
    String key = newKey();
    Decision limited = begin("tenant-a", key);

    Problem429.assertRateLimited(limited, 1);
    assertThat(
            store.get(
                RecordId.of(Scope.of(Scope.hash("tenant-a"), "POST /**"), IdempotencyKey.of(key))))
        .isEmpty();
  }

  @Test
  void tokensRefillAtTheConfiguredRate() {
    for (int i = 0; i < 3; i++) {
      proceedAndFinish("tenant-a", newKey());
    }
    assertThat(begin("tenant-a", newKey())).isInstanceOf(Decision.Respond.class);

    nanos.addAndGet(Duration.ofMillis(500).toNanos());

    assertThat(begin("tenant-a", newKey())).isInstanceOf(Decision.Proceed.class);
  }

  @Test
  void replaysOfKnownKeysAreNeverLimited() {
    String key = newKey();
    proceedAndFinish("tenant-a", key);
    for (int i = 0; i < 50; i++) {
      Decision replay = begin("tenant-a", key);
      assertThat(replay)
          .isInstanceOfSatisfying(Decision.Respond.class, r -> assertThat(r.replayed()).isTrue());
    }
    proceedAndFinish("tenant-a", newKey());
    proceedAndFinish("tenant-a", newKey());
  }

  @Test
  void aTenantOverItsLimitStillGetsItsReplaysAndConflicts() {
    String done = newKey();
    proceedAndFinish("tenant-a", done);
    String inFlight = newKey();
    assertThat(begin("tenant-a", inFlight)).isInstanceOf(Decision.Proceed.class);
    proceedAndFinish("tenant-a", newKey());
    Problem429.assertRateLimited(begin("tenant-a", newKey()), 1);

    assertThat(begin("tenant-a", done))
        .isInstanceOfSatisfying(Decision.Respond.class, r -> assertThat(r.replayed()).isTrue());
    assertThat(begin("tenant-a", inFlight))
        .isInstanceOfSatisfying(
            Decision.Respond.class, r -> assertThat(r.response().status()).isEqualTo(409));
  }

  @Test
  void oneTenantsAbuseNeverLimitsAnother() {
    for (int i = 0; i < 3; i++) {
      proceedAndFinish("abuser", newKey());
    }
    Problem429.assertRateLimited(begin("abuser", newKey()), 1);

    proceedAndFinish("victim", newKey());
  }

  @Test
  void memoryIsBoundedByMaxTenantsAndRefilledBucketsAreDropped() {
    NewKeyLimit limit =
        NewKeyLimit.perSecond(1).burst(1).maxTenants(2).nanoClock(nanos::get).build();
    assertThat(limit.acquire("a")).isZero();
    assertThat(limit.acquire("b")).isZero();
    assertThat(limit.acquire("c")).isZero(); // the map is full: c uses the shared overflow bucket
    assertThat(limit.acquire("d")).isPositive(); // ... which c just emptied
    assertThat(limit.trackedTenants()).isEqualTo(2);

    nanos.addAndGet(Duration.ofSeconds(2).toNanos());

    assertThat(limit.acquire("d")).isZero();
    assertThat(limit.trackedTenants()).isEqualTo(1);
  }

  @Test
  void longTenantsAreKeptByTheirHash() {
    NewKeyLimit limit = NewKeyLimit.perSecond(1).burst(1).nanoClock(nanos::get).build();
    String longTenant = "t".repeat(10_000);
    assertThat(limit.acquire(longTenant)).isZero();
    assertThat(limit.acquire(longTenant)).isPositive();
  }

  @Test
  void unlimitedIsTheDefaultAndNeverAnswers429() {
    HttpIdempotency unlimited = HttpIdempotency.builder(once).build();
    for (int i = 0; i < 200; i++) {
      String key = newKey();
      assertThat(unlimited.begin(unlimited.route("/p"), request("tenant-a", key)))
          .isInstanceOf(Decision.Proceed.class);
    }
    assertThat(NewKeyLimit.UNLIMITED.unlimited()).isTrue();
  }

  @Test
  void badSettingsAreRefusedNamingTheOption() {
    assertThatThrownBy(() -> NewKeyLimit.perSecond(0)).hasMessageContaining("newKeysPerSecond");
    assertThatThrownBy(() -> NewKeyLimit.perSecond(Double.NaN))
        .hasMessageContaining("newKeysPerSecond");
    assertThatThrownBy(() -> NewKeyLimit.perSecond(1).burst(0)).hasMessageContaining("burst");
    assertThatThrownBy(() -> NewKeyLimit.perSecond(1).maxTenants(0))
        .hasMessageContaining("maxTenants");
  }

  private String newKey() {
    return "key-" + (++keys);
  }

  private Decision begin(String apiKey, String key) {
    return http.begin(http.route("/p"), request(apiKey, key));
  }

  private void proceedAndFinish(String apiKey, String key) {
    Decision d = begin(apiKey, key);
    assertThat(d).isInstanceOf(Decision.Proceed.class);
    ((Decision.Proceed) d)
        .exchange()
        .record(new StoredResponse(201, Headers.EMPTY, "ok".getBytes(StandardCharsets.UTF_8)));
  }

  private static IncomingRequest request(String apiKey, String key) {
    return IncomingRequest.of(
        "POST",
        "/p",
        Headers.of("Api-Key", apiKey, "Idempotency-Key", key, "Content-Type", "application/json"),
        "{}".getBytes(StandardCharsets.UTF_8));
  }

  /** The 429 problem's shape. */
  static final class Problem429 {
    static void assertRateLimited(Decision d, long retryAfterSeconds) {
      assertThat(d)
          .isInstanceOfSatisfying(
              Decision.Respond.class,
              r -> {
                assertThat(r.replayed()).isFalse();
                assertThat(r.response().status()).isEqualTo(429);
                assertThat(r.response().headers().first("Content-Type"))
                    .contains(Problems.MEDIA_TYPE);
                assertThat(r.response().headers().first("Retry-After"))
                    .contains(Long.toString(retryAfterSeconds));
                assertThat(new String(r.response().body(), StandardCharsets.UTF_8))
                    .contains(ProblemType.RATE_LIMITED.uri());
              });
    }
  }
}
