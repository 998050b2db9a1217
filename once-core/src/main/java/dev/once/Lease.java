package dev.once;

import java.util.concurrent.CompletionStage;

/**
 * A held lease, from {@link Admission.Proceed}. While held, it is extended by heartbeat (if the
 * policy says so). Finish it exactly once with one of {@link #complete}, {@link
 * #failFinal(byte[])}, {@link #failFinal(FinalFailure)}, {@link #completeWithoutResult()}, {@link
 * #release()}, {@link #abandon()} or {@link #giveBack()}; a second finish throws {@link
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

  /**
   * Deletes the record: a retry executes afresh. After a transient failure, {@link #giveBack} is
   * the safe call.
   */
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
   * Gives the key back after an attempt that had no effect (it threw before its effect, or it never
   * ran): {@link #release releases} it if nothing else can have happened under it, and otherwise
   * ends the lease at once, keeps the record, and answers {@link Recording#UNKNOWN}. Something else
   * can have happened when the lease was {@link #stolen} (the holder before may have had its
   * effect) or when its holder checkpointed (the steps before the checkpoint had theirs). A release
   * would delete the record and its recovery point, and the next claim would start the work afresh,
   * unaware; kept, the record is stolen by the next claim, which resumes from the recovery point.
   * Ending the lease ({@code IdempotencyStore#endLease}) spares the retry the wait for the lease;
   * where the store cannot, or fails to, the lease ends by itself, as after {@link #abandon}. The
   * engine finishes a transient failure, and a lease its caller did not get to run, this way;
   * {@link #release} is for a caller who knows better.
   */
  Recording giveBack();

  /** {@link #giveBack}, asynchronously, as {@link #completeAsync}. */
  CompletionStage<Recording> giveBackAsync();
}
