package dev.once.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Admission;
import dev.once.ExecutionPolicy;
import dev.once.FailureMode;
import dev.once.FakeUnavailableStore;
import dev.once.FinalFailure;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Lease;
import dev.once.Once;
import dev.once.ResultCodec;
import dev.once.Scope;
import dev.once.store.InMemoryStore;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class OnceMetricsTest {

  private static final Fingerprint SAME = new Fingerprint(1, "00".repeat(32));
  private static final Fingerprint OTHER = new Fingerprint(1, "11".repeat(32));
  private static final Scope SCOPE = Scope.of("merchant", "POST /payments");

  private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
  private final Once once =
      Once.builder(InMemoryStore.create()).listener(OnceMetrics.of(registry)).build();

  @AfterEach
  void close() {
    once.close();
  }

  private static IdempotencyKey key() {
    return IdempotencyKey.of(UUID.randomUUID().toString());
  }

  private double count(String name, String... tags) {
    return registry.get(name).tags(tags).counter().count();
  }

  @Test
  void everyMeterExistsBeforeAnythingHappens() {
    assertThat(count("once.executions", "outcome", "completed", "recording", "recorded")).isZero();
    assertThat(count("once.replays", "outcome", "failed_final")).isZero();
    assertThat(count("once.lease.steals")).isZero();
    assertThat(registry.get("once.store.calls").tag("operation", "claim").timer().count()).isZero();
  }

  @Test
  void executionsAndReplaysAreCountedByOutcome() {
    IdempotencyKey paid = key();
    IdempotencyKey declined = key();
    once.execute(SCOPE, paid, SAME, ResultCodec.utf8(), ctx -> "pay_1");
    once.execute(SCOPE, paid, SAME, ResultCodec.utf8(), ctx -> "pay_2");
    once.execute(
        SCOPE,
        declined,
        SAME,
        ResultCodec.utf8(),
        ctx -> {
          throw new FinalFailure("insufficient-funds", "balance too low");
        });
    once.execute(SCOPE, declined, SAME, ResultCodec.utf8(), ctx -> "never");

    assertThat(count("once.executions", "outcome", "completed", "recording", "recorded"))
        .isEqualTo(1);
    assertThat(count("once.executions", "outcome", "failed_final", "recording", "recorded"))
        .isEqualTo(1);
    assertThat(count("once.replays", "outcome", "completed")).isEqualTo(1);
    assertThat(count("once.replays", "outcome", "failed_final")).isEqualTo(1);
  }

  @Test
  void conflictsAndMismatchesAreCounted() {
    IdempotencyKey key = key();
    Admission first = once.begin(SCOPE, key, SAME, ExecutionPolicy.DEFAULTS);

    once.begin(SCOPE, key, SAME, ExecutionPolicy.DEFAULTS);
    once.begin(SCOPE, key, OTHER, ExecutionPolicy.DEFAULTS);

    assertThat(count("once.inflight.conflicts")).isEqualTo(1);
    assertThat(count("once.fingerprint.mismatches")).isEqualTo(1);
    ((Admission.Proceed) first).lease().release();
  }

  @Test
  void aStolenLeaseIsCountedForTheThiefAndForTheZombie() throws Exception {
    ExecutionPolicy shortLease =
        ExecutionPolicy.builder().lease(Duration.ofMillis(20)).heartbeat(false).build();
    IdempotencyKey key = key();
    Lease zombie = ((Admission.Proceed) once.begin(SCOPE, key, SAME, shortLease)).lease();
    Thread.sleep(50);

    Lease thief = ((Admission.Proceed) once.begin(SCOPE, key, SAME, shortLease)).lease();
    zombie.complete(new byte[] {1});

    assertThat(count("once.lease.steals")).isEqualTo(1);
    assertThat(count("once.lease.lost")).isEqualTo(1);
    thief.release();
  }

  @Test
  void aStoreThatIsDownIsCountedAsRefusalsOrAsUnprotectedPasses() {
    SimpleMeterRegistry down = new SimpleMeterRegistry();
    try (Once closed =
        Once.builder(new FakeUnavailableStore()).listener(OnceMetrics.of(down)).build()) {
      closed.begin(SCOPE, key(), SAME, ExecutionPolicy.DEFAULTS);
      closed.begin(
          SCOPE, key(), SAME, ExecutionPolicy.builder().failureMode(FailureMode.FAIL_OPEN).build());

      assertThat(down.get("once.store.failures").counter().count()).isEqualTo(1);
      assertThat(down.get("once.failopen.passes").counter().count()).isEqualTo(1);
    }
  }

  @Test
  void storeCallsAreTimedByOperation() {
    once.execute(SCOPE, key(), SAME, ResultCodec.utf8(), ctx -> "pay_1");

    assertThat(registry.get("once.store.calls").tag("operation", "claim").timer().count())
        .isEqualTo(1);
    assertThat(registry.get("once.store.calls").tag("operation", "complete").timer().count())
        .isEqualTo(1);
  }

  @Test
  void extraTagsAreOnEveryMeter() {
    SimpleMeterRegistry tagged = new SimpleMeterRegistry();
    OnceMetrics.of(tagged, Tags.of("store", "postgres"));

    assertThat(tagged.getMeters())
        .allSatisfy(m -> assertThat(m.getId().getTag("store")).isEqualTo("postgres"));
  }
}
