package dev.once.store.lincheck;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.InMemoryStore;
import dev.once.store.RecordId;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import org.jetbrains.kotlinx.lincheck.LinChecker;
import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.jetbrains.kotlinx.lincheck.annotations.Param;
import org.jetbrains.kotlinx.lincheck.paramgen.IntGen;
import org.jetbrains.kotlinx.lincheck.paramgen.LongGen;
import org.junit.jupiter.api.Test;

/**
 * Lincheck proves that concurrent claims, writes and reads of {@link InMemoryStore} on two keys are
 * linearisable: every concurrent run it tries has results that some sequential run of the same
 * operations produces. The clock stands still, so tokens (one store-wide counter) order the claims
 * across keys; {@link InMemoryStoreLeaseLincheckIT} lets time move on one key.
 *
 * <p>The sequential specification is this class itself, run on one thread.
 *
 * <p>No field of this class holds a record ({@code RecordId}, {@code Fingerprint}): Lincheck 2.39
 * walks the initial test instance and its classes' static fields with {@code Unsafe}, which the JDK
 * refuses for record fields, so ids and fingerprints are made inside each operation.
 */
@Param(name = "key", gen = IntGen.class, conf = "0:1")
@Param(name = "token", gen = LongGen.class, conf = "1:4")
public class InMemoryStoreLincheckIT {

  private static final Instant NOW = Instant.parse("2030-01-01T00:00:00Z");
  private static final Duration LEASE = Duration.ofSeconds(30);
  private static final Duration TTL = Duration.ofHours(1);

  private final InMemoryStore store =
      InMemoryStore.builder().clock(Clock.fixed(NOW, ZoneOffset.UTC)).build();

  @Operation
  public String claim(@Param(name = "key") int key) {
    return Describe.claim(
        store.claim(
            new ClaimRequest(id(key), new Fingerprint(1, Describe.FINGERPRINT_HEX), LEASE, TTL)));
  }

  @Operation
  public boolean complete(@Param(name = "key") int key, @Param(name = "token") long token) {
    return store.complete(id(key), token, Describe.utf8("completed by " + token), TTL);
  }

  @Operation
  public boolean failFinal(@Param(name = "key") int key, @Param(name = "token") long token) {
    return store.failFinal(id(key), token, Describe.utf8("failed by " + token), TTL);
  }

  @Operation
  public boolean release(@Param(name = "key") int key, @Param(name = "token") long token) {
    return store.release(id(key), token);
  }

  @Operation
  public boolean heartbeat(@Param(name = "key") int key, @Param(name = "token") long token) {
    return store.heartbeat(id(key), token, LEASE);
  }

  @Operation
  public boolean checkpoint(@Param(name = "key") int key, @Param(name = "token") long token) {
    return store.checkpoint(id(key), token, Describe.utf8("step of " + token), LEASE);
  }

  @Operation
  public String get(@Param(name = "key") int key) {
    return Describe.get(store.get(id(key)));
  }

  @Test
  void concurrentRunsAreLinearisableUnderStress() {
    LinChecker.check(InMemoryStoreLincheckIT.class, LincheckBudget.stress());
  }

  @Test
  void everyInterleavingTheModelCheckerTriesIsLinearisable() {
    LinChecker.check(InMemoryStoreLincheckIT.class, LincheckBudget.modelChecking());
  }

  private static RecordId id(int key) {
    return RecordId.of(new Scope("lincheck"), IdempotencyKey.of("key-" + key));
  }
}
