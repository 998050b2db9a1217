package dev.once.store;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.ExecutionResult;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Once;
import dev.once.ResultCodec;
import dev.once.Scope;
import dev.once.tck.FakeClock;
import dev.once.tck.Samples;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** AES-GCM at rest: round trips, rotation, and every way a payload can become unreadable. */
class EncryptingStoreTest {

  static final byte[] K1 = bytes(32, 1);
  static final byte[] K2 = bytes(32, 2);
  static final Keyring KEYS_V1 = Keyring.builder().active("k1", K1).build();
  static final Keyring KEYS_V2 = Keyring.builder().active("k2", K2).retired("k1", K1).build();
  static final Keyring ONLY_V2 = Keyring.builder().active("k2", K2).build();
  static final Duration LEASE = Duration.ofSeconds(30);
  static final Duration TTL = Duration.ofHours(1);
  static final String MARKER = "card=4242424242424242";

  private final FakeClock clock = FakeClock.create();
  private final InMemoryStore raw = InMemoryStore.builder().clock(clock).build();

  @Test
  void aResultRoundTripsThroughTheEngineAndIsStoredOnlyAsCiphertext() {
    RecordId id = Samples.newId();
    AtomicInteger runs = new AtomicInteger();
    try (Once once = Once.of(EncryptingStore.of(raw, KEYS_V1))) {
      ExecutionResult<String> first =
          once.execute(
              id.scope(),
              id.key(),
              fp(),
              ResultCodec.utf8(),
              ctx -> MARKER + runs.incrementAndGet());
      ExecutionResult<String> replay =
          once.execute(
              id.scope(),
              id.key(),
              fp(),
              ResultCodec.utf8(),
              ctx -> MARKER + runs.incrementAndGet());

      assertThat(first).isInstanceOf(ExecutionResult.Executed.class);
      assertThat(replay)
          .isEqualTo(new ExecutionResult.Replayed<>(MARKER + 1, dev.once.Outcome.COMPLETED));
    }
    byte[] stored = raw.get(id).orElseThrow().result();
    assertThat(stored[0]).isEqualTo(EncryptingStore.FORMAT);
    assertThat(new String(stored, StandardCharsets.ISO_8859_1))
        .doesNotContain("4242")
        .contains("k1");
  }

  @Test
  void afterARotationOldRecordsAreStillReadAndNewOnesUseTheNewKey() {
    RecordId old = complete(EncryptingStore.of(raw, KEYS_V1), Samples.newId(), "before");
    EncryptingStore rotated = EncryptingStore.of(raw, KEYS_V2);
    RecordId fresh = complete(rotated, Samples.newId(), "after");

    assertThat(text(rotated.get(old).orElseThrow().result())).isEqualTo("before");
    assertThat(text(rotated.get(fresh).orElseThrow().result())).isEqualTo("after");
    assertThat(keyIdOf(raw.get(old).orElseThrow().result())).isEqualTo("k1");
    assertThat(keyIdOf(raw.get(fresh).orElseThrow().result())).isEqualTo("k2");
  }

  @Test
  void aRecordWhoseKeyWasDroppedIsATypedErrorAndTheEngineAnswersResponseUnavailable() {
    RecordId id = complete(EncryptingStore.of(raw, KEYS_V1), Samples.newId(), "paid");
    EncryptingStore withoutK1 = EncryptingStore.of(raw, ONLY_V2);

    assertThatThrownBy(() -> withoutK1.get(id))
        .isInstanceOfSatisfying(
            UnreadableRecordException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(UnreadableRecordException.Reason.KEY_MISSING);
              assertThat(e.keyId()).isEqualTo("k1");
              assertThat(e.id()).isEqualTo(id);
            });
    AtomicInteger runs = new AtomicInteger();
    try (Once once = Once.of(withoutK1)) {
      ExecutionResult<String> retry =
          once.execute(
              id.scope(),
              id.key(),
              fp(),
              ResultCodec.utf8(),
              ctx -> "again" + runs.incrementAndGet());
      assertThat(retry).isInstanceOf(ExecutionResult.ResponseUnavailable.class);
    }
    assertThat(runs).hasValue(0);
  }

  @Test
  void aTamperedCiphertextFailsAuthentication() {
    RecordId id = complete(EncryptingStore.of(raw, KEYS_V1), Samples.newId(), "paid");
    IdempotencyRecord stored = raw.get(id).orElseThrow();
    byte[] tampered = stored.result().clone();
    tampered[tampered.length - 20] ^= 1;
    InMemoryStore copy = InMemoryStore.builder().clock(clock).build();
    plant(copy, id, tampered);

    assertThatThrownBy(() -> EncryptingStore.of(copy, KEYS_V1).get(id))
        .isInstanceOfSatisfying(
            UnreadableRecordException.class,
            e ->
                assertThat(e.reason())
                    .isEqualTo(UnreadableRecordException.Reason.AUTHENTICATION_FAILED));
  }

  @Test
  void aCiphertextMovedToAnotherRecordFailsAuthentication() {
    RecordId victim =
        complete(EncryptingStore.of(raw, KEYS_V1), Samples.newId(), "victim's receipt");
    byte[] ciphertext = raw.get(victim).orElseThrow().result();
    RecordId attacker = RecordId.of(Scope.of("attacker", "POST /p"), victim.key());
    plant(raw, attacker, ciphertext);

    assertThatThrownBy(() -> EncryptingStore.of(raw, KEYS_V1).get(attacker))
        .isInstanceOfSatisfying(
            UnreadableRecordException.class,
            e ->
                assertThat(e.reason())
                    .isEqualTo(UnreadableRecordException.Reason.AUTHENTICATION_FAILED));
  }

  @Test
  void aRecoveryPointIsEncryptedAndHandedToAThiefInClear() {
    EncryptingStore store = EncryptingStore.of(raw, KEYS_V1);
    RecordId id = Samples.newId();
    Fingerprint fp = fp();
    ClaimResult.Claimed first =
        (ClaimResult.Claimed) store.claim(new ClaimRequest(id, fp, LEASE, TTL));
    store.checkpoint(id, first.token(), MARKER.getBytes(StandardCharsets.UTF_8), LEASE);
    assertThat(new String(raw.get(id).orElseThrow().recoveryPoint(), StandardCharsets.ISO_8859_1))
        .doesNotContain("4242");

    clock.advance(LEASE);
    ClaimResult.Claimed thief =
        (ClaimResult.Claimed) store.claim(new ClaimRequest(id, fp, LEASE, TTL));

    assertThat(thief.stolen()).isTrue();
    assertThat(text(thief.recoveryPoint())).isEqualTo(MARKER);
  }

  @Test
  void aListingShowsAnEncryptedRecoveryPointWhoseKeyIsGoneWithoutFailingOrShowingItsBytes() {
    RecordId id = Samples.newId();
    ClaimResult.Claimed c =
        (ClaimResult.Claimed)
            EncryptingStore.of(raw, KEYS_V1).claim(new ClaimRequest(id, fp(), LEASE, TTL));
    EncryptingStore.of(raw, KEYS_V1)
        .checkpoint(id, c.token(), MARKER.getBytes(StandardCharsets.UTF_8), LEASE);
    // A store that hands back the stored (sealed) bytes in its listing.
    IdempotencyStore verbose =
        new ForwardingStore() {
          @Override
          protected IdempotencyStore delegate() {
            return raw;
          }

          @Override
          public InFlight inFlight(Duration olderThan, int limit) {
            return new InFlight(List.of(raw.get(id).orElseThrow()), true);
          }
        };

    InFlight listed = EncryptingStore.of(verbose, ONLY_V2).inFlight(Duration.ZERO, 10);

    assertThat(listed.records()).extracting(IdempotencyRecord::id).containsExactly(id);
    assertThat(listed.records().get(0).recoveryPoint()).isNotNull().isEmpty();
    assertThat(listed.records().get(0).createdAt()).isNotNull();
    assertThat(EncryptingStore.of(raw, ONLY_V2).inFlight(Duration.ZERO, 10).records())
        .extracting(IdempotencyRecord::id)
        .containsExactly(id);
  }

  @Test
  void aRecoveryPointCannotBeReplayedAsAResult() {
    EncryptingStore store = EncryptingStore.of(raw, KEYS_V1);
    RecordId id = Samples.newId();
    ClaimResult.Claimed c =
        (ClaimResult.Claimed) store.claim(new ClaimRequest(id, fp(), LEASE, TTL));
    store.checkpoint(id, c.token(), "step-1".getBytes(StandardCharsets.UTF_8), LEASE);
    byte[] sealedRecoveryPoint = raw.get(id).orElseThrow().recoveryPoint();
    raw.complete(id, c.token(), sealedRecoveryPoint, TTL);

    assertThatThrownBy(() -> store.get(id)).isInstanceOf(UnreadableRecordException.class);
  }

  @Test
  void plaintextIsReadOnlyWhileMigrating() {
    RecordId id = Samples.newId();
    complete(raw, id, "written before encryption");

    assertThatThrownBy(() -> EncryptingStore.of(raw, KEYS_V1).get(id))
        .isInstanceOfSatisfying(
            UnreadableRecordException.class,
            e -> assertThat(e.reason()).isEqualTo(UnreadableRecordException.Reason.MALFORMED));
    EncryptingStore migrating = EncryptingStore.builder(raw, KEYS_V1).readPlaintext(true).build();
    assertThat(text(migrating.get(id).orElseThrow().result()))
        .isEqualTo("written before encryption");
  }

  @Test
  void truncatedOrForeignBytesAreMalformedNeverAnIndexError() {
    for (byte[] junk :
        new byte[][] {
          {},
          {EncryptingStore.FORMAT},
          {EncryptingStore.FORMAT, 0},
          {EncryptingStore.FORMAT, 2, 'k', '1', 0, 0},
          {EncryptingStore.FORMAT, (byte) 200, 'k'}
        }) {
      RecordId id = Samples.newId();
      plant(raw, id, junk);
      assertThatThrownBy(() -> EncryptingStore.of(raw, KEYS_V1).get(id))
          .as(Arrays.toString(junk))
          .isInstanceOfSatisfying(
              UnreadableRecordException.class,
              e -> assertThat(e.reason()).isEqualTo(UnreadableRecordException.Reason.MALFORMED));
    }
  }

  @Test
  void twoEncryptionsOfOneResultDiffer() {
    EncryptingStore store = EncryptingStore.of(raw, KEYS_V1);
    RecordId a = complete(store, Samples.newId(), "same");
    RecordId b =
        complete(store, RecordId.of(a.scope(), IdempotencyKey.of(a.key().value() + "-2")), "same");
    assertThat(raw.get(a).orElseThrow().result()).isNotEqualTo(raw.get(b).orElseThrow().result());
  }

  /**
   * The asynchronous calls reach the wrapped store's own (this one answers at once, as Redis and
   * the embedded store answer without a caller's thread waiting), never the caller's blocking
   * executor, and are sealed and opened as the blocking ones are.
   */
  @Test
  void theAsynchronousCallsAreTheWrappedStoresOwnAndStillEncrypt() throws Exception {
    EncryptingStore store = EncryptingStore.of(raw, KEYS_V1);
    AtomicInteger blockingCalls = new AtomicInteger();
    java.util.concurrent.Executor blocking =
        call -> {
          blockingCalls.incrementAndGet();
          call.run();
        };
    RecordId id = Samples.newId();
    ClaimResult.Claimed c = (ClaimResult.Claimed) claimAsync(store, id, blocking);
    assertThat(
            store
                .completeAsync(
                    id, c.token(), MARKER.getBytes(StandardCharsets.UTF_8), TTL, blocking)
                .toCompletableFuture()
                .get())
        .isTrue();
    assertThat(new String(raw.get(id).orElseThrow().result(), StandardCharsets.ISO_8859_1))
        .doesNotContain("4242");
    assertThat(
            text(store.getAsync(id, blocking).toCompletableFuture().get().orElseThrow().result()))
        .isEqualTo(MARKER);
    ClaimResult again = claimAsync(store, id, blocking);
    assertThat(text(((ClaimResult.Existing) again).record().result())).isEqualTo(MARKER);

    RecordId other = Samples.newId();
    ClaimResult.Claimed d = (ClaimResult.Claimed) claimAsync(store, other, blocking);
    assertThat(
            store
                .failFinalAsync(other, d.token(), bytes(8, 3), TTL, blocking)
                .toCompletableFuture()
                .get())
        .isTrue();
    assertThat(raw.get(other).orElseThrow().result()[0]).isEqualTo(EncryptingStore.FORMAT);
    assertThat(store.getAsync(other, blocking).toCompletableFuture().get().orElseThrow().result())
        .isEqualTo(bytes(8, 3));

    assertThat(blockingCalls).as("calls run on the caller's blocking executor").hasValue(0);
  }

  private static ClaimResult claimAsync(
      IdempotencyStore store, RecordId id, java.util.concurrent.Executor blocking)
      throws Exception {
    return store
        .claimAsync(new ClaimRequest(id, fp(), LEASE, TTL), blocking)
        .toCompletableFuture()
        .get();
  }

  private static RecordId complete(IdempotencyStore store, RecordId id, String result) {
    ClaimResult.Claimed c =
        (ClaimResult.Claimed) store.claim(new ClaimRequest(id, fp(), LEASE, TTL));
    assertThat(store.complete(id, c.token(), result.getBytes(StandardCharsets.UTF_8), TTL))
        .isTrue();
    return id;
  }

  /** Writes these exact bytes as a record's result, as someone with access to the store could. */
  private static void plant(IdempotencyStore store, RecordId id, byte[] result) {
    ClaimResult.Claimed c =
        (ClaimResult.Claimed) store.claim(new ClaimRequest(id, fp(), LEASE, TTL));
    store.complete(id, c.token(), result, TTL);
  }

  private static Fingerprint fp() {
    return new Fingerprint(1, "00112233445566778899aabbccddeeff");
  }

  private static String keyIdOf(byte[] sealed) {
    return new String(sealed, 2, sealed[1], StandardCharsets.US_ASCII);
  }

  private static String text(byte[] b) {
    return new String(b, StandardCharsets.UTF_8);
  }

  static byte[] bytes(int n, int seed) {
    byte[] b = new byte[n];
    for (int i = 0; i < n; i++) {
      b[i] = (byte) (seed * 31 + i);
    }
    return b;
  }
}
