package dev.once.store;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * The store SPI: a handful of atomic operations over records unique on (scope, key).
 *
 * <p>Every implementation passes the contract kit in {@code once-tck}. The rules, from the design
 * contract:
 *
 * <ul>
 *   <li>{@link #claim} is one atomic store operation. On an absent or expired record it creates an
 *       {@link RecordState#IN_PROGRESS} record with a new token ({@code stolen} false, no recovery
 *       point: an expired record is absent, whatever it held). On an in-progress record whose lease
 *       has ended and whose fingerprint equals the request's, it <em>steals</em>: a new token, the
 *       recovery point kept and handed over ({@code stolen} true). Otherwise it changes nothing and
 *       returns the record: a live lease, a different fingerprint, or a terminal record whatever
 *       the fingerprint (the caller decides what a mismatch means).
 *   <li>A token is larger for every lease granted on a key and never granted twice for the same
 *       key, not even after a release or an expiry.
 *   <li>{@link #heartbeat}, {@link #checkpoint}, {@link #complete}, {@link #failFinal} and {@link
 *       #release} succeed only while the record is in progress and its stored token equals the
 *       caller's (even if the lease has ended, as long as nobody stole it); they return {@code
 *       false} otherwise and change nothing. On an absent record they create nothing.
 *   <li>A lease has ended, and a record has expired, from the instant its {@code leaseUntil} or
 *       {@code expiresAt} is reached ({@code now >= leaseUntil}), as {@link
 *       IdempotencyRecord#isStealable()} computes it.
 *   <li>Expired records behave as absent in every operation; {@link #purgeExpired} deletes them.
 *   <li>Scopes and keys compare exactly: case-sensitive, character for character, with no Unicode
 *       normalisation (a store on a database must use a binary collation), and a store keeps every
 *       scope up to {@link dev.once.Scope#MAX_LENGTH} characters, supplementary characters
 *       included.
 *   <li>Results and recovery points round-trip byte for byte, from empty to at least 1 MiB; an
 *       empty array stays empty, never {@code null}.
 *   <li>Time comes from the store's own clock where it has one.
 *   <li>A store that cannot answer throws {@link StoreUnavailableException} within a bounded time.
 *   <li>Null arguments throw {@link NullPointerException}; a duration that is not positive, or a
 *       batch size below 1, throws {@link IllegalArgumentException}.
 * </ul>
 *
 * <p><b>Asynchronous calls.</b> {@link #claimAsync}, {@link #getAsync}, {@link #completeAsync},
 * {@link #failFinalAsync}, {@link #releaseAsync} and {@link #endLeaseAsync} do what their blocking
 * namesakes do and complete with what those return, or exceptionally with what those throw ({@link
 * StoreUnavailableException} and the rest, not wrapped). A store whose client is asynchronous
 * (Redis through Lettuce, the one in memory) overrides them so that no thread waits for the store;
 * the defaults run the blocking call on the {@code blocking} executor the caller passes, a bounded
 * pool it owns, and answer {@link StoreUnavailableException} when that pool refuses the call (it is
 * full or shut down).
 *
 * <p>Byte arrays passed in are not modified, and may be kept by the store without copying: callers
 * must not change them afterwards. Byte arrays in returned records may likewise be shared with the
 * store: callers must not change them either.
 */
public interface IdempotencyStore extends AutoCloseable {

  /**
   * Claims the record, atomically: a new lease, or the existing record. A fresh record lives {@link
   * ClaimRequest#ttl()} from now, and at least until its lease ends; a steal never shortens the
   * life of the record it takes over.
   */
  ClaimResult claim(ClaimRequest request);

  /** Returns the live record, or empty if it is absent or expired. */
  Optional<IdempotencyRecord> get(RecordId id);

  /**
   * Extends the lease to {@code lease} from now. Like {@link #checkpoint}, it also pushes the
   * record's expiry to at least the new lease end, so a long operation never outlives its record.
   */
  boolean heartbeat(RecordId id, long token, Duration lease);

  /**
   * Extends many leases to {@code lease} from now, each exactly as {@link #heartbeat(RecordId,
   * long, Duration)} would, and returns those it extended: a lease it does not return is no longer
   * held (finished, released, stolen or expired). One slow store call must keep thousands of leases
   * alive, so a store does this in as few round trips as it can (one multi-row statement, one
   * pipelined script); the default makes one {@code heartbeat} call per lease and is right only for
   * stores whose calls cost no round trip.
   *
   * <p>If it throws {@link StoreUnavailableException}, any of the leases may or may not have been
   * extended; the caller treats them all as not extended this time. The same record may appear at
   * most once; an empty collection returns an empty set without calling the store.
   */
  default Set<LeaseToken> heartbeat(Collection<LeaseToken> leases, Duration lease) {
    RecordId.requireDistinct(leases, LeaseToken::id, "leases");
    Set<LeaseToken> extended = new HashSet<>();
    for (LeaseToken held : leases) {
      if (heartbeat(held.id(), held.token(), lease)) {
        extended.add(held);
      }
    }
    return extended;
  }

  /**
   * Saves a recovery point that a later thief will be handed, replacing any earlier one, and
   * extends the lease to {@code lease} from now, pushing the expiry like {@link #heartbeat}.
   */
  boolean checkpoint(RecordId id, long token, byte[] recoveryPoint, Duration lease);

  /**
   * Marks the record {@link RecordState#COMPLETED} with its result; it lives {@code ttl} from now
   * (which may be shorter or longer than the claim's TTL) and never changes again until it expires.
   */
  boolean complete(RecordId id, long token, byte[] result, Duration ttl);

  /** Marks the record {@link RecordState#FAILED_FINAL} with its result, like {@link #complete}. */
  boolean failFinal(RecordId id, long token, byte[] result, Duration ttl);

  /**
   * Deletes the in-progress record so the key can be claimed afresh; the next claim is a fresh one,
   * with a larger token and no recovery point.
   */
  boolean release(RecordId id, long token);

  /**
   * Ends the lease now and keeps the record as it is (state, fingerprint, token, recovery point,
   * expiry): the next claim with the same fingerprint steals it at once, stolen and with the
   * recovery point, as it would once the lease had ended by itself. For a holder that gives its key
   * back when it may not release it: work under the key may have had an effect (a checkpoint, or a
   * holder before it), but nothing runs under this lease any more. Fenced by the token like every
   * write; returns whether it applied. A store that announces changes ({@link #awaitChange})
   * announces this one too, so that a waiting duplicate takes the key over at once.
   *
   * <p>Optional: the default does nothing and returns false, and the lease then ends by itself. The
   * contract kit checks a store that says it ends leases ({@code endsLeases()}).
   */
  default boolean endLease(RecordId id, long token) {
    Objects.requireNonNull(id, "id");
    return false;
  }

  /**
   * Gives back a claim that nobody ran under (a batch call that failed after this store granted it,
   * a batch its caller stopped before it got to the claim): {@link #release}s a fresh claim, and
   * {@link #endLease ends the lease} of a stolen one, whose record — recovery point and all — must
   * outlive it ({@link ClaimResult.Claimed#releasableUnused}). Either way the next claim takes the
   * key at once. Returns whether the store applied it; a store that does not end leases leaves a
   * stolen claim to its lease.
   *
   * <p>Not meant to be overridden: it is the one place that decides how an unused claim is undone.
   */
  default boolean giveBackUnused(RecordId id, ClaimResult.Claimed claim) {
    return claim.releasableUnused() ? release(id, claim.token()) : endLease(id, claim.token());
  }

  /**
   * Claims many records, each exactly as {@link #claim} would, and answers in request order. A
   * store that {@link #batches} does it in as few round trips as it can (one transaction, one
   * pipeline); the default makes one {@code claim} call per request.
   *
   * <p>The requests name distinct records (a caller with two requests for one record sends them in
   * separate calls): a repeated record throws {@link IllegalArgumentException} before anything is
   * claimed ({@link RecordId#requireDistinct}). All or nothing on failure: if it throws, every
   * record is as it was, or held by a lease nobody runs under, which a later claim steals when it
   * ends. The claims it made are given back ({@link #giveBackUnused}): a fresh one is released, a
   * stolen one keeps its record and has its lease ended. A claim whose answer was lost with the
   * connection (nobody learned its token), and one whose give-back was lost the same way, are left
   * to their leases. An empty list returns an empty list without calling the store.
   */
  default List<ClaimResult> claimAll(List<ClaimRequest> requests) {
    return Batches.claimEach(this, requests);
  }

  /**
   * Applies many finishing writes, each exactly as {@link #complete}, {@link #failFinal} or {@link
   * #release} would, and answers in order whether each applied. A store that {@link #batches} does
   * it in as few round trips as it can; the default makes one call per write. The writes name
   * distinct records: a repeated record throws {@link IllegalArgumentException} before anything is
   * written.
   *
   * <p>If it throws {@link StoreUnavailableException}, any of the writes may or may not have
   * applied; the caller finds out per record, as after a single write whose answer was lost. An
   * empty list returns an empty list without calling the store.
   */
  default List<Boolean> finishAll(List<Finish> finishes) {
    RecordId.requireDistinct(finishes, Finish::id, "finishing writes");
    List<Boolean> applied = new ArrayList<>(finishes.size());
    for (Finish finish : finishes) {
      applied.add(finish.applyTo(this));
    }
    return applied;
  }

  /**
   * Whether the engine should gather the single claims and finishes of concurrent callers into
   * {@link #claimAll} and {@link #finishAll} calls: true where one batch call costs much less than
   * its calls made side by side (a database, where it is one transaction and one commit). False by
   * default; false for a store whose client already shares round trips between concurrent calls
   * (Redis pipelines them on one connection); and false for decorators ({@link ForwardingStore}): a
   * decorator that must see every single write (encryption) is never bypassed by a batch. A
   * decorator that batches only some calls says so here and which in {@link #batchesOnThisThread}.
   * A caller's own batch ({@code Once.beginAll}) calls {@link #claimAll} whatever this says.
   *
   * <p>A store that says true must apply a {@link #finishAll} that fails with anything but {@link
   * StoreUnavailableException} not at all (one transaction does): the engine then makes its writes
   * again one by one, to find whose the failure was, and a write made again after it applied
   * answers {@code false}, which its lease would read as taken over.
   */
  default boolean batches() {
    return false;
  }

  /**
   * How many gathered batches the engine may have under way at once before a call waits for one to
   * return, given that the store {@link #batches()}; read once, when the engine is built. One by
   * default: where a batch costs the store mostly what any batch costs (a database's round trips,
   * its commit, a server process woken per statement), batches side by side are smaller and every
   * record pays more, so calls made while one is under way wait and go together. More where a batch
   * costs the store nothing of its own (Redis, if built so: one script on a pipelined connection),
   * so that the store is not left idle while an answer travels. The engine uses at most {@link
   * #MOST_BATCHES_AT_ONCE}, and however many this says, a full batch waiting goes alongside the one
   * under way, up to that many.
   */
  default int batchesAtOnce() {
    return 1;
  }

  /**
   * The most gathered batches of claims (and, separately, of finishes) the engine has under way on
   * one store at once, whatever {@link #batchesAtOnce} says.
   */
  int MOST_BATCHES_AT_ONCE = 4;

  /**
   * Whether the engine may gather the single claim or finish that the calling thread is about to
   * make, given that the store {@link #batches()}: a gathered call runs on another thread, in
   * another transaction. True by default wherever {@link #batches()} is. A decorator whose calls
   * depend on the calling thread says false while they do: the Spring starter's store, which joins
   * the caller's database transaction, answers false inside one (so that the claim and the recorded
   * outcome commit or roll back with the caller's own writes) and lets the calls of every other
   * request be gathered.
   */
  default boolean batchesOnThisThread() {
    return batches();
  }

  /**
   * Deletes up to {@code batchSize} expired records and returns how many it deleted; live records
   * are never touched. Runs in bounded time and without blocking claims; call it again while it
   * returns {@code batchSize}.
   */
  int purgeExpired(int batchSize);

  /**
   * Lists live {@link RecordState#IN_PROGRESS} records that have been running at least {@code
   * olderThan} by the store's clock, oldest first, at most {@code limit}: an operator's view of
   * work that is stuck or slow. Running means since the record's first lease ({@link
   * IdempotencyRecord#createdAt()}): a steal does not restart the count, since the work is the same
   * and still not done; a fresh claim of an absent or expired key does. A record counts when {@code
   * createdAt <= now - olderThan}; {@code olderThan} zero lists every live in-progress record.
   * Expired records are absent, whatever their state, and are never listed.
   *
   * <p>Records whose creation time the store does not know ({@code createdAt} null: written by a
   * version of the store that did not record it) are listed whatever {@code olderThan} says, before
   * all others: an in-progress record that old is exactly what an operator looks for, and leaving
   * it out would hide it.
   *
   * <p>Bounded work: each call examines at most a store-specific budget of records (a few thousand
   * rows of an index, a bounded number of {@code SCAN} or {@code Scan} pages). A store whose index
   * answers in creation order looks at the oldest candidates first and skips only expired ones
   * beyond its budget; a store that scans in no order skips whatever it did not reach. Either way
   * it then answers {@link InFlight#complete()} false: older matches may exist. Not a snapshot:
   * records changing during the call may or may not be listed.
   *
   * <p>Metadata only: a listed record tells whether it has a recovery point, not what it holds (its
   * {@code recoveryPoint} is an empty array if it has one, {@code null} if not), so a listing never
   * ships or decrypts payloads, and an encrypted recovery point whose key is gone is no failure.
   *
   * @throws IllegalArgumentException if {@code olderThan} is negative or longer than {@link
   *     InFlight#MAX_OLDER_THAN}, or {@code limit} is outside 1..{@value InFlight#MAX_LIMIT} (see
   *     {@link InFlight#check})
   */
  InFlight inFlight(Duration olderThan, int limit);

  /**
   * Returns a future that completes when the record may have changed state (a claim, a completion,
   * a final failure, a release or a deletion); heartbeats and checkpoints need not wake it. Time
   * passing is not a change: nothing wakes a waiter when a lease ends or a record expires, so
   * callers bound every wait by {@link IdempotencyRecord#leaseRemaining()}. It may complete
   * spuriously; callers re-read the record. Stores without change notification return a future that
   * never completes, and callers poll. Cancelling the future, or ending it any other way,
   * unsubscribes. Subscribe before reading the record, so a change between the read and the wait is
   * not missed.
   */
  default CompletableFuture<Void> awaitChange(RecordId id) {
    return new CompletableFuture<>();
  }

  /**
   * {@link #claim}, without a thread waiting where the store's client allows; see the class
   * comment.
   */
  default CompletionStage<ClaimResult> claimAsync(ClaimRequest request, Executor blocking) {
    return Stages.onExecutor(() -> claim(request), blocking);
  }

  /** {@link #get}, asynchronously; see the class comment. */
  default CompletionStage<Optional<IdempotencyRecord>> getAsync(RecordId id, Executor blocking) {
    return Stages.onExecutor(() -> get(id), blocking);
  }

  /** {@link #complete}, asynchronously; see the class comment. */
  default CompletionStage<Boolean> completeAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return Stages.onExecutor(() -> complete(id, token, result, ttl), blocking);
  }

  /** {@link #failFinal}, asynchronously; see the class comment. */
  default CompletionStage<Boolean> failFinalAsync(
      RecordId id, long token, byte[] result, Duration ttl, Executor blocking) {
    return Stages.onExecutor(() -> failFinal(id, token, result, ttl), blocking);
  }

  /** {@link #release}, asynchronously; see the class comment. */
  default CompletionStage<Boolean> releaseAsync(RecordId id, long token, Executor blocking) {
    return Stages.onExecutor(() -> release(id, token), blocking);
  }

  /** {@link #endLease}, asynchronously; see the class comment. */
  default CompletionStage<Boolean> endLeaseAsync(RecordId id, long token, Executor blocking) {
    return Stages.onExecutor(() -> endLease(id, token), blocking);
  }

  /** {@link #giveBackUnused}, asynchronously; see the class comment. Not meant to be overridden. */
  default CompletionStage<Boolean> giveBackUnusedAsync(
      RecordId id, ClaimResult.Claimed claim, Executor blocking) {
    return claim.releasableUnused()
        ? releaseAsync(id, claim.token(), blocking)
        : endLeaseAsync(id, claim.token(), blocking);
  }

  /**
   * {@link #heartbeat(Collection, Duration)}, asynchronously; see the class comment. The engine
   * keeps its leases alive with it, so a store whose client is asynchronous keeps thousands alive
   * without a thread waiting for the store.
   */
  default CompletionStage<Set<LeaseToken>> heartbeatAsync(
      Collection<LeaseToken> leases, Duration lease, Executor blocking) {
    return Stages.onExecutor(() -> heartbeat(leases, lease), blocking);
  }

  /** {@link #claimAll}, asynchronously; see the class comment. */
  default CompletionStage<List<ClaimResult>> claimAllAsync(
      List<ClaimRequest> requests, Executor blocking) {
    return Stages.onExecutor(() -> claimAll(requests), blocking);
  }

  /** {@link #finishAll}, asynchronously; see the class comment. */
  default CompletionStage<List<Boolean>> finishAllAsync(List<Finish> finishes, Executor blocking) {
    return Stages.onExecutor(() -> finishAll(finishes), blocking);
  }

  /** Whether {@link #awaitChange} delivers real notifications, so waiters need not poll often. */
  default boolean notifiesChanges() {
    return false;
  }

  /**
   * Releases the store's own resources; never closes a {@code DataSource} or client it was given.
   */
  @Override
  default void close() {}
}
