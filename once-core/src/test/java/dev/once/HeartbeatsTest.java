package dev.once;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** How the engine's heartbeats batch its leases. */
@Timeout(30)
class HeartbeatsTest {

  /**
   * Two leases of one engine on one record (a zombie whose lease the store let end, and the thief
   * that took it over) never share a heartbeat batch: the SPI refuses a batch that names a record
   * twice, and a refused batch would extend neither, so the thief would lose a live lease.
   */
  @Test
  void twoLeasesOnOneRecordBeatInSeparateCallsAndTheThiefStaysAlive() throws Exception {
    ManualClock clock = new ManualClock();
    Recording store = new Recording(InMemoryStore.builder().clock(clock).build());
    ExecutionPolicy policy = ExecutionPolicy.builder().lease(Duration.ofMillis(300)).build();
    try (Once once = Once.builder(store).defaults(policy).build()) {
      Scope scope = Scope.of("heartbeats");
      IdempotencyKey key = IdempotencyKey.of("one-record");
      Fingerprint fp = new Fingerprint(1, "00112233445566778899aabbccddeeff");
      Lease zombie = ((Admission.Proceed) once.begin(scope, key, fp, policy)).lease();
      clock.advance(Duration.ofSeconds(1)); // the store's lease ended; the engine's has not
      Lease thief = ((Admission.Proceed) once.begin(scope, key, fp, policy)).lease();
      assertThat(thief.stolen()).isTrue();

      Thread.sleep(1_000);

      assertThat(store.batches).isNotEmpty();
      for (List<RecordId> batch : List.copyOf(store.batches)) {
        assertThat(new HashSet<>(batch)).as("records of %s", batch).hasSameSizeAs(batch);
      }
      assertThat(thief.leaseLost()).as("the thief's lease lost").isFalse();
      assertThat(zombie.leaseLost()).as("the zombie's lease lost").isTrue();
      assertThat(thief.complete(new byte[] {1})).isEqualTo(dev.once.Recording.RECORDED);
    }
  }

  /** Records the records of every batched heartbeat. */
  private static final class Recording extends ForwardingStore {
    final List<List<RecordId>> batches = Collections.synchronizedList(new ArrayList<>());
    private final IdempotencyStore delegate;

    Recording(IdempotencyStore delegate) {
      this.delegate = delegate;
    }

    @Override
    protected IdempotencyStore delegate() {
      return delegate;
    }

    @Override
    public Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
      List<RecordId> ids = new ArrayList<>();
      leases.forEach(l -> ids.add(l.id()));
      batches.add(ids);
      return delegate.heartbeat(leases, lease);
    }
  }

  private static final class ManualClock extends Clock {
    private final AtomicReference<Instant> now = new AtomicReference<>(Instant.now());

    void advance(Duration d) {
      now.updateAndGet(t -> t.plus(d));
    }

    @Override
    public Instant instant() {
      return now.get();
    }

    @Override
    public ZoneId getZone() {
      return ZoneOffset.UTC;
    }

    @Override
    public Clock withZone(ZoneId zone) {
      return this;
    }
  }
}
