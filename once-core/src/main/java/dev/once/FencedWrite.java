package dev.once;

import dev.once.store.Finish;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.ResultTooLargeException;
import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The finishing write of one lease, fenced by its token: the rules that try it, try it again while
 * the store fails, and read what an attempt whose answer was lost did. {@link Recording#LEASE_LOST}
 * when the store refused it, after telling {@code lost}.
 *
 * @param finishes gathers the finishing writes of concurrent leases into batches, or null where the
 *     store does not batch
 * @param blocking where the asynchronous calls of a blocking store run
 * @param lost told when the store refused the write
 */
record FencedWrite(
    IdempotencyStore store,
    @Nullable Batcher<Finish, Boolean> finishes,
    Executor blocking,
    RecordId id,
    long token,
    Duration ttl,
    Runnable lost) {

  private static final Logger log = LoggerFactory.getLogger(FencedWrite.class);

  /**
   * When a finishing write is tried, and tried again while the store fails: the record must not be
   * left behind.
   */
  private static final long[] BACKOFF_MILLIS = {0, 25, 100, 400};

  Step<Recording> writing(Finish.Kind write, byte[] payload) {
    return writing(write, payload, 0, null);
  }

  /** A recording of an outcome kept without its result. */
  static Step<Recording> notStored(Recording r) {
    return Step.done(r == Recording.RECORDED ? Recording.RESULT_NOT_STORED : r);
  }

  /**
   * One fenced finishing write, tried again while the store fails (the record must not be left
   * behind): an attempt whose answer was lost may still have landed, which the record then shows. A
   * result the store cannot keep is recorded as an outcome without it, so the operation still
   * counts as done instead of leaving a record a thief could run again.
   */
  private Step<Recording> writing(
      Finish.Kind write, byte[] payload, int attempt, @Nullable StoreUnavailableException failure) {
    if (attempt == BACKOFF_MILLIS.length) {
      return notRecorded(failure);
    }
    long millis = BACKOFF_MILLIS[attempt];
    if (millis == 0) {
      return attempt(write, payload, attempt, failure);
    }
    return Step.call(
        pause(millis),
        paused ->
            paused.failed() || !paused.value() // interrupted: stop trying
                ? notRecorded(failure)
                : attempt(write, payload, attempt, failure));
  }

  private Step<Recording> attempt(
      Finish.Kind write, byte[] payload, int attempt, @Nullable StoreUnavailableException failure) {
    return new Attempt(write, payload, attempt, failure);
  }

  /**
   * One attempt at the write, gathered with other leases' writes where the store batches, and the
   * rule that reads its answer; one object, as every finished lease makes one.
   */
  private final class Attempt extends Step.Call<Boolean, Recording> {
    private final Finish finish;
    private final int attempt;
    private final @Nullable StoreUnavailableException failure;
    private final @Nullable Batcher<Finish, Boolean> gathered;

    Attempt(
        Finish.Kind write,
        byte[] payload,
        int attempt,
        @Nullable StoreUnavailableException failure) {
      this.finish = new Finish(write, id, token, payload, ttl);
      this.attempt = attempt;
      this.failure = failure;
      this.gathered = store.batchesOnThisThread() ? finishes : null;
    }

    @Override
    Boolean answer() {
      return gathered == null ? finish.applyTo(store) : gathered.call(finish);
    }

    @Override
    CompletionStage<Boolean> answerAsync() {
      return gathered == null ? finish.applyAsyncTo(store, blocking) : gathered.callAsync(finish);
    }

    @Override
    Step<Recording> then(Tried<Boolean> applied) {
      Finish.Kind write = finish.kind();
      if (!applied.failed()) {
        return applied.value() ? Step.done(written(write)) : refused(write, failure);
      }
      if (applied.failure() instanceof ResultTooLargeException e
          && finish.payload() != Payloads.notStored()) {
        log.warn(
            "the store cannot keep the result of {} ({}); recording the outcome without it",
            id,
            e.getMessage());
        return writing(write, Payloads.notStored(), 0, null).then(FencedWrite::notStored);
      }
      if (applied.failure() instanceof StoreUnavailableException e) {
        return writing(write, finish.payload(), attempt + 1, e);
      }
      // Among them a store that cannot keep one byte: it is broken; say so.
      return Step.failed(applied.failure());
    }
  }

  /**
   * The store refused the write: the lease was lost to another, unless an earlier attempt, whose
   * answer was lost, had already applied it.
   */
  private Step<Recording> refused(Finish.Kind write, @Nullable StoreUnavailableException failure) {
    if (failure == null) {
      return Step.done(lostToAnother());
    }
    return Step.call(
        Io.of(() -> store.get(id), () -> store.getAsync(id, blocking)),
        now ->
            Step.done(
                !now.failed() && alreadyApplied(write, now.value())
                    ? written(write)
                    : lostToAnother()));
  }

  private Step<Recording> notRecorded(@Nullable StoreUnavailableException failure) {
    log.warn(
        "could not record the outcome of {} (token {}); the record stays in progress until its lease ends",
        id,
        token,
        failure);
    return Step.done(Recording.UNKNOWN);
  }

  private static Recording written(Finish.Kind write) {
    return write == Finish.Kind.RELEASE ? Recording.RELEASED : Recording.RECORDED;
  }

  /** The store refused the write: another holds the key now. */
  private Recording lostToAnother() {
    lost.run();
    return Recording.LEASE_LOST;
  }

  /** Whether the record as it is {@code now} shows that this lease's write landed. */
  private boolean alreadyApplied(Finish.Kind write, Optional<IdempotencyRecord> now) {
    if (write == Finish.Kind.RELEASE) {
      return now.isEmpty() || now.get().token() > token;
    }
    return now.isPresent()
        && now.get().token() == token
        && now.get().state() != RecordState.IN_PROGRESS;
  }

  /**
   * Waits so long before an attempt; answers false if the waiting thread was interrupted.
   * Asynchronously, no thread waits.
   */
  private static Io<Boolean> pause(long millis) {
    if (millis == 0) {
      return Io.of(() -> true, () -> CompletableFuture.completedFuture(true));
    }
    return Io.of(
        () -> {
          try {
            Thread.sleep(millis);
            return true;
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
          }
        },
        () ->
            CompletableFuture.supplyAsync(
                () -> true, CompletableFuture.delayedExecutor(millis, TimeUnit.MILLISECONDS)));
  }
}
