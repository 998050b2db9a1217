package dev.once;

import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.Finish;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/** The store's claims and finishing writes, as the calls a {@link Batcher} gathers. */
final class BatchedCalls {

  private BatchedCalls() {}

  record Claims(IdempotencyStore store, Executor blocking)
      implements Batcher.Calls<ClaimRequest, ClaimResult> {
    @Override
    public RecordId record(ClaimRequest request) {
      return request.id();
    }

    @Override
    public ClaimResult one(ClaimRequest request) {
      return store.claim(request);
    }

    @Override
    public CompletionStage<ClaimResult> oneAsync(ClaimRequest request) {
      return store.claimAsync(request, blocking);
    }

    @Override
    public List<ClaimResult> all(List<ClaimRequest> requests) {
      return store.claimAll(requests);
    }

    @Override
    public CompletionStage<List<ClaimResult>> allAsync(List<ClaimRequest> requests) {
      return store.claimAllAsync(requests, blocking);
    }

    /**
     * Whether a claim with the same fingerprint: whether a record is claimable depends on the
     * record, the store's clock and the fingerprint (a lease that ended is taken over only by the
     * same request), never on the requested lease or time to live.
     */
    @Override
    public boolean mayShare(ClaimRequest carrier, ClaimRequest other) {
      return carrier.fingerprint().equals(other.fingerprint());
    }

    /** A record read (a replay, a lease in flight, a mismatch); a lease granted is one caller's. */
    @Override
    public boolean shareable(ClaimResult answer) {
      return answer instanceof ClaimResult.Existing;
    }
  }

  record Finishes(IdempotencyStore store, Executor blocking)
      implements Batcher.Calls<Finish, Boolean> {
    @Override
    public RecordId record(Finish finish) {
      return finish.id();
    }

    @Override
    public Boolean one(Finish finish) {
      return finish.applyTo(store);
    }

    @Override
    public CompletionStage<Boolean> oneAsync(Finish finish) {
      return finish.applyAsyncTo(store, blocking);
    }

    @Override
    public List<Boolean> all(List<Finish> finishes) {
      return store.finishAll(finishes);
    }

    @Override
    public CompletionStage<List<Boolean>> allAsync(List<Finish> finishes) {
      return store.finishAllAsync(finishes, blocking);
    }

    /** Never: two writes to one record (a zombie's and its thief's) are each their own. */
    @Override
    public boolean mayShare(Finish carrier, Finish other) {
      return false;
    }

    @Override
    public boolean shareable(Boolean answer) {
      return false;
    }
  }
}
