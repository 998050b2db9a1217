package dev.once.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Admission;
import dev.once.ExecutionPolicy;
import dev.once.Fingerprint;
import dev.once.Lease;
import dev.once.Once;
import dev.once.Recording;
import dev.once.tck.FaultyStore;
import dev.once.tck.FaultyStore.Call;
import dev.once.tck.LeaseWatch;
import dev.once.tck.Samples;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * DESIGN §2: heartbeats scale with the work. Ten thousand leases held at once on a store that takes
 * 50 ms for every heartbeat call never lapse, for three lease lengths: a watch between the engine
 * and the store notes each time a lease is extended, and no lease ever goes a whole lease without
 * one; retries that try to take the keys over meanwhile never succeed. With one blocking call per
 * lease on one thread, as before, at most {@code lease / 3 / 50 ms} leases stay alive: 6 of 1 s, 53
 * of 8 s.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HeartbeatCapacityTest {

  private static final int LEASES = 10_000;
  private static final Duration LATENCY = Duration.ofMillis(50);

  @ParameterizedTest(name = "lease {0} ms")
  @ValueSource(ints = {1_000, 3_000, 8_000})
  void tenThousandLeasesOnAStoreWithFiftyMillisecondHeartbeatsNeverLapse(int leaseMillis)
      throws Exception {
    Duration leaseLength = Duration.ofMillis(leaseMillis);
    InMemoryStore memory = InMemoryStore.create();
    LeaseWatch watch = LeaseWatch.wrap(memory);
    FaultyStore slow = FaultyStore.wrap(watch).latency(LATENCY, Call.HEARTBEAT);
    ExecutionPolicy policy = ExecutionPolicy.builder().lease(leaseLength).build();
    Fingerprint fp = Samples.newFingerprint();

    try (Once once = Once.of(slow)) {
      List<Lease> leases = new ArrayList<>(LEASES);
      for (int i = 0; i < LEASES; i++) {
        RecordId id = Samples.newId();
        leases.add(((Admission.Proceed) once.begin(id.scope(), id.key(), fp, policy)).lease());
      }

      // Hold them for two lease lengths (six heartbeat periods), while retries try to take keys
      // over.
      long until = System.nanoTime() + 2 * leaseLength.toNanos();
      int steals = 0;
      int attempts = 0;
      while (System.nanoTime() - until < 0 && attempts < 1_000_000) {
        Lease victim = leases.get(ThreadLocalRandom.current().nextInt(LEASES));
        RecordId id = RecordId.of(victim.scope(), victim.key());
        if (memory.claim(new ClaimRequest(id, fp, policy.lease(), policy.ttl()))
            instanceof ClaimResult.Claimed) {
          steals++;
        }
        attempts++;
        TimeUnit.MICROSECONDS.sleep(200);
      }

      Duration longestGap = watch.longestGap(System.nanoTime());
      assertThat(steals).as("leases taken over by retries in %d attempts", attempts).isZero();
      assertThat(longestGap)
          .as("the longest time a lease went without an extension")
          .isLessThan(leaseLength);
      assertThat(leases).noneMatch(Lease::leaseLost);
      for (Lease lease : leases) {
        assertThat(lease.complete(new byte[] {1})).isEqualTo(Recording.RECORDED);
      }
      assertThat(slow.calls(Call.HEARTBEAT))
          .as("heartbeat calls: batched, not one per lease")
          .isLessThan(LEASES);
    }
  }
}
