package dev.once;

import java.util.concurrent.CompletionStage;

/**
 * A held lease, from {@link Admission.Proceed}. While held, it is extended by heartbeat (if the
 * policy says so). Finish it exactly once with one of {@link #complete}, {@link
 * #failFinal(byte[])}, {@link #failFinal(FinalFailure)}, {@link #completeWithoutResult()}, {@link
 * #release()}, {@link #abandon()} or {@link #giveBackAsync()}; a second finish throws {@link
 * IllegalStateException}.
 *
 * <p>Every finish is fenced by the lease's token: if the lease was stolen, it changes nothing and
 * answers {@link Recording#LEASE_LOST}.
 */
public interface Lease extends ExecutionContext {

  /** Records success with the value to replay. Values over the policy's cap are not stored. */
  Recording complete(byte[] value);

  /** Records a deterministic failure with the value to replay. */
  Recording failFinal(byte[] value);

  /** Records a deterministic failure thrown as an exception; replays get it back. */
  Recording failFinal(FinalFailure failure);

  /**
   * Records that the work is done although its result cannot be stored (streamed, too large):
   * retries get {@link Admission.ResponseUnavailable} and never run the work again.
   */
  Recording completeWithoutResult();

  /** Deletes the record (a transient failure): a retry executes afresh. */
  Recording release();

  /**
   * Stops heartbeating and leaves the record in progress until its lease ends: for failures whose
   * effect is unknown (a timeout after the request was sent), where releasing could duplicate it.
   */
  void abandon();

  /**
   * {@link #complete}, without a thread waiting for the store where its client is asynchronous
   * (others are called on the engine's store executor); retries a failing store as {@link
   * #complete} does, without holding a thread between attempts.
   */
  CompletionStage<Recording> completeAsync(byte[] value);

  /** {@link #failFinal(byte[])}, asynchronously, as {@link #completeAsync}. */
  CompletionStage<Recording> failFinalAsync(byte[] value);

  /** {@link #failFinal(FinalFailure)}, asynchronously, as {@link #completeAsync}. */
  CompletionStage<Recording> failFinalAsync(FinalFailure failure);

  /** {@link #completeWithoutResult}, asynchronously, as {@link #completeAsync}. */
  CompletionStage<Recording> completeWithoutResultAsync();

  /** {@link #release}, asynchronously, as {@link #completeAsync}. */
  CompletionStage<Recording> releaseAsync();

  /**
   * Finishes a lease that nothing ran under (a batch stopped before its turn came): {@link
   * #releaseAsync releases} a fresh one, and {@link #abandon abandons} a {@link #stolen} one, as
   * {@link dev.once.store.ClaimResult.Claimed#releasableUnused} explains. Completes once the key is
   * free, or left to its lease.
   */
  CompletionStage<Void> giveBackAsync();
}
