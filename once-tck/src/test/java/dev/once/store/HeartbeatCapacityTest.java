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
import dev.once.tck.Samples;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * DESIGN §2: heartbeats scale with the work. Ten thousand leases held at once on a store that takes
 * 50 ms for every heartbeat call never lapse, for three lease lengths: a watch between the engine and
 * the store notes each time a lease is extended, and no lease ever goes a whole lease without one;
 * retries that try to take the keys over meanwhile never succeed. With one blocking call per lease,
 * as before, a heartbeat thread could keep about 30 such leases of 500 ms alive.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HeartbeatCapacityTest {

  private static final int LEASES = 10_000;
  private static final Duration LATENCY = Duration.ofMillis(50);

  @ParameterizedTest(name = "lease {0} ms")
  @ValueSource(ints = {500, 1_500, 4_000})
  void tenThousandLeasesOnAStoreWithFiftyMillisecondHeartbeatsNeverLapse(int leaseMillis) throws Exception {
    Duration leaseLength = Duration.ofMillis(leaseMillis);
    InMemoryStore memory = InMemoryStore.create();
    ExtensionWatch watch = new ExtensionWatch(memory);
    FaultyStore slow = FaultyStore.wrap(watch).latency(LATENCY, Call.HEARTBEAT);
    ExecutionPolicy policy = ExecutionPolicy.builder().lease(leaseLength).build();
    Fingerprint fp = Samples.newFingerprint();

    try (Once once = Once.of(slow)) {
      List<Lease> leases = new ArrayList<>(LEASES);
      for (int i = 0; i < LEASES; i++) {
        RecordId id = Samples.newId();
        watch.claimed(id);
        leases.add(((Admission.Proceed) once.begin(id.scope(), id.key(), fp, policy)).lease());
      }

      // Hold them for three lease lengths, while retries keep trying to take keys over.
      long until = System.nanoTime() + 3 * leaseLength.toNanos();
      int steals = 0;
      int attempts = 0;
      while (System.nanoTime() - until < 0 && attempts < 1_000_000) {
        Lease victim = leases.get(ThreadLocalRandom.current().nextInt(LEASES));
        RecordId id = RecordId.of(victim.scope(), victim.key());
        if (memory.claim(new ClaimRequest(id, fp, policy.lease(), policy.ttl())) instanceof ClaimResult.Claimed) {
          steals++;
        }
        attempts++;
        TimeUnit.MICROSECONDS.sleep(200);
      }

      long longestGap = watch.longestGapNanos(System.nanoTime());
      assertThat(steals).as("leases taken over by retries in %d attempts", attempts).isZero();
      assertThat(Duration.ofNanos(longestGap)).as("the longest time a lease went without an extension")
          .isLessThan(leaseLength);
      assertThat(leases).noneMatch(Lease::leaseLost);
      for (Lease lease : leases) {
        assertThat(lease.complete(new byte[] {1})).isEqualTo(Recording.RECORDED);
      }
      assertThat(slow.calls(Call.HEARTBEAT)).as("heartbeat calls: batched, not one per lease")
          .isLessThan(LEASES);
    }
  }

  /** Notes, for every lease, when the store last extended it: at its claim, then at each heartbeat. */
  private static final class ExtensionWatch extends ForwardingStore {
    private final IdempotencyStore delegate;
    private final Map<RecordId, Long> lastExtended = new ConcurrentHashMap<>();
    private final Map<RecordId, Long> longestGap = new ConcurrentHashMap<>();

    ExtensionWatch(IdempotencyStore delegate) {
      this.delegate = delegate;
    }

    @Override
    protected IdempotencyStore delegate() {
      return delegate;
    }

    void claimed(RecordId id) {
      lastExtended.put(id, System.nanoTime());
    }

    @Override
    public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
      Set<LeaseToken> extended = delegate.heartbeat(leases, lease);
      long now = System.nanoTime();
      for (LeaseToken token : extended) {
        extendedAt(token.id(), now);
      }
      return extended;
    }

    @Override
    public boolean heartbeat(RecordId id, long token, Duration lease) {
      boolean extended = delegate.heartbeat(id, token, lease);
      if (extended) {
        extendedAt(id, System.nanoTime());
      }
      return extended;
    }

    private void extendedAt(RecordId id, long now) {
      Long before = lastExtended.put(id, now);
      if (before != null) {
        longestGap.merge(id, now - before, Math::max);
      }
    }

    /** The longest gap between extensions of any lease, counting the one still open at {@code now}. */
    long longestGapNanos(long now) {
      long longest = 0;
      for (Map.Entry<RecordId, Long> e : lastExtended.entrySet()) {
        longest = Math.max(longest, Math.max(now - e.getValue(), longestGap.getOrDefault(e.getKey(), 0L)));
      }
      return longest;
    }
  }
}
