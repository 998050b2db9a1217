package dev.once.store.lincheck;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.InMemoryStore;
import dev.once.store.RecordId;
import dev.once.tck.FakeClock;
import java.time.Duration;
import org.jetbrains.kotlinx.lincheck.LinChecker;
import org.jetbrains.kotlinx.lincheck.annotations.Operation;
import org.jetbrains.kotlinx.lincheck.annotations.Param;
import org.jetbrains.kotlinx.lincheck.paramgen.IntGen;
import org.jetbrains.kotlinx.lincheck.paramgen.LongGen;
import org.junit.jupiter.api.Test;

/**
 * Lincheck proves that leases ending, steals, recovery points and expiry on one key are
 * linearisable while time moves: {@link #tick()} is an operation like any other, so the sequential
 * specification (this class on one thread) sees the clock move at one point in the order.
 *
 * <p>One key only: operations on one key read the clock under that key's lock, so each takes effect
 * at one instant. Across keys, a claim could read the clock before a tick and take its token after
 * another key's claim that read the clock after it, an order no sequential run produces; that
 * difference is invisible to callers (tokens only order one key) and {@link
 * InMemoryStoreLincheckIT} covers many keys with a still clock.
 */
@Param(name = "token", gen = LongGen.class, conf = "1:4")
@Param(name = "fingerprint", gen = IntGen.class, conf = "1:2")
public class InMemoryStoreLeaseLincheckIT {

  private static final Duration TICK = Duration.ofSeconds(1);
  private static final Duration LEASE = Duration.ofSeconds(2);
  private static final Duration TTL = Duration.ofSeconds(3);

  private final FakeClock clock = FakeClock.create();
  private final InMemoryStore store = InMemoryStore.builder().clock(clock).build();

  @Operation
  public String claim(@Param(name = "fingerprint") int fingerprint) {
    Fingerprint fp = new Fingerprint(fingerprint, Describe.FINGERPRINT_HEX);
    return Describe.claim(store.claim(new ClaimRequest(id(), fp, LEASE, TTL)));
  }

  @Operation
  public boolean complete(@Param(name = "token") long token) {
    return store.complete(id(), token, Describe.utf8("completed by " + token), TTL);
  }

  @Operation
  public boolean release(@Param(name = "token") long token) {
    return store.release(id(), token);
  }

  @Operation
  public boolean heartbeat(@Param(name = "token") long token) {
    return store.heartbeat(id(), token, LEASE);
  }

  @Operation
  public boolean checkpoint(@Param(name = "token") long token) {
    return store.checkpoint(id(), token, Describe.utf8("step of " + token), LEASE);
  }

  @Operation
  public String get() {
    return Describe.get(store.get(id()));
  }

  @Operation
  public void tick() {
    clock.advance(TICK);
  }

  /** Made afresh each time: see {@link InMemoryStoreLincheckIT} for why no field holds a record. */
  private static RecordId id() {
    return RecordId.of(new Scope("lincheck"), IdempotencyKey.of("the-key"));
  }

  @Test
  void concurrentRunsAreLinearisableUnderStress() {
    LinChecker.check(InMemoryStoreLeaseLincheckIT.class, LincheckBudget.stress());
  }

  @Test
  void everyInterleavingTheModelCheckerTriesIsLinearisable() {
    LinChecker.check(InMemoryStoreLeaseLincheckIT.class, LincheckBudget.modelChecking());
  }
}
