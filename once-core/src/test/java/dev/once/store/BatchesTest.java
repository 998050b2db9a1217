package dev.once.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimResult.Claimed;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The default {@link IdempotencyStore#claimAll}: single claims in a row, undone on failure. */
class BatchesTest {

  private static final Scope SCOPE = Scope.of("merchant-1", "orders");
  private static final Fingerprint FP = new Fingerprint(1, "aa".repeat(32));
  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofHours(1);

  private final MovingClock clock = new MovingClock();
  private final InMemoryStore memory = InMemoryStore.builder().clock(clock).build();

  /** The in-memory store, whose claim of the key {@code broken} fails. */
  private final IdempotencyStore failingOnBroken =
      new ForwardingStore() {
        @Override
        protected IdempotencyStore delegate() {
          return memory;
        }

        @Override
        public ClaimResult claim(ClaimRequest request) {
          if (request.id().key().value().equals("broken")) {
            throw new StoreUnavailableException("the connection broke");
          }
          return super.claim(request);
        }
      };

  private static RecordId id(String key) {
    return RecordId.of(SCOPE, IdempotencyKey.of(key));
  }

  private static ClaimRequest request(String key) {
    return new ClaimRequest(id(key), FP, LEASE, TTL);
  }

  /**
   * The batch stole an ended lease and claimed a fresh key before a later claim failed. The fresh
   * claim is released. The stolen one is not: a release would delete the record and the recovery
   * point its first holder saved, and the next claim would start the work afresh. Its lease is
   * ended, so the next claim steals it at once, as it would have before the batch.
   */
  @Test
  void aFailedBatchReleasesItsFreshClaimsAndHandsAStolenOneOver() {
    Claimed first = (Claimed) memory.claim(request("stale"));
    assertThat(memory.checkpoint(id("stale"), first.token(), utf8("charged"), LEASE)).isTrue();
    clock.advance(LEASE.plusSeconds(1)); // its holder is gone

    assertThatThrownBy(
            () ->
                Batches.claimEach(
                    failingOnBroken,
                    List.of(request("stale"), request("fresh"), request("broken"))))
        .isInstanceOf(StoreUnavailableException.class);

    assertThat(memory.get(id("fresh"))).as("the fresh claim, released").isEmpty();
    IdempotencyRecord stale = memory.get(id("stale")).orElseThrow();
    assertThat(stale.state()).isEqualTo(RecordState.IN_PROGRESS);
    assertThat(stale.token()).as("the batch's steal stands").isGreaterThan(first.token());
    Claimed next = (Claimed) memory.claim(request("stale"));
    assertThat(next.stolen()).isTrue();
    assertThat(next.recoveryPoint()).isEqualTo(utf8("charged"));
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }
}
