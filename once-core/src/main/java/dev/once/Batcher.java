package dev.once;

import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import org.jspecify.annotations.Nullable;

/**
 * Gathers the single store calls of concurrent callers into batch calls ("smart batching", as in a
 * database's group commit): a call made while none is under way goes at once, alone, so an idle
 * engine adds no delay; calls made while one is under way wait and go together as the next batch
 * when it returns. Under load one round trip (and, on a database, one commit) serves many callers.
 *
 * <p>One batch at a time, because a batch's cost to the store is mostly its own (round trips,
 * commit, the server's wake-ups), not its records': side by side, batches are smaller and every
 * record pays more. At 50 callers, against up to four side by side, PostgreSQL spent a third of the
 * CPU a request and served 1.7 to 2 times as many, MariaDB 1.1 to 1.3 times; Redis, within noise
 * (docs/benchmarks.md, "One gathered batch at a time"). A store whose batches cost it nothing of
 * their own may ask for more at once ({@code atOnce}; Redis, one script on a pipelined connection,
 * if built so: smaller batches cost the client more CPU a call), and then calls go at once while
 * fewer are under way. Only when a full batch ({@code maxBatch} calls) waits does it go alongside
 * the one under way, up to {@code maxInFlight}, so that a store whose batch time grows with its
 * size (a round trip per record) still serves a crowd larger than a batch; a batch that returns
 * while another is under way leaves fewer than a full batch of waiting calls to that one.
 *
 * <p>A blocking caller runs a batch on its own thread, never on a pool: the caller that finds the
 * store idle leads, and when its batch returns it hands the next one to a blocking caller waiting
 * in it, who leads in turn. Only a batch of asynchronous callers alone goes through the store's
 * asynchronous call. So blocking callers need no free pool thread, and cannot starve each other of
 * one.
 *
 * <p>A batch holds at most one call per record ({@link #takeBatch}): concurrent duplicates of one
 * key go to the store one batch after another, as concurrent single calls would, so gathering never
 * changes an answer. A duplicate that would read the same ({@link Calls#mayShare}) rides along
 * instead: if the store's answer changed nothing ({@link Calls#shareable}: a replay, a lease in
 * flight), it is the rider's answer too, since the rider was made before the store read it; if it
 * granted something, the rider goes back to the head of the queue for the next batch. So a herd
 * replaying one key costs one read a batch, not one batch a caller.
 *
 * <p>A batch that fails with {@link StoreUnavailableException} fails every call in it, as the store
 * would have failed each alone. Any other failure is one record's (an unreadable record, say): its
 * calls are then made one by one (asynchronously, for a batch of asynchronous callers), so the
 * failure reaches only the caller it belongs to. A store that answers a batch with the wrong number
 * of answers fails every call in it: which of them it made is unknown. Splitting the batch is safe
 * only because such a batch applied nothing that a call made again would misread: {@code claimAll}
 * is all or nothing by the SPI (a stolen claim it leaves to its lease answers the claim made again
 * as in flight, never as a second lease), and a store that asks to be gathered ({@code batches()})
 * must make {@code finishAll} apply nothing, as one transaction does. A finishing write made again
 * after it had applied would answer {@code false}, which its lease reads as taken over.
 *
 * @param <Q> a single call's request
 * @param <A> its answer
 */
final class Batcher<Q, A> {

  /** The store calls behind it: one alone or a batch, blocking or asynchronous. */
  interface Calls<Q, A> {
    /** The record the call is for: a batch holds at most one call per record. */
    RecordId record(Q request);

    A one(Q request);

    CompletionStage<A> oneAsync(Q request);

    List<A> all(List<Q> requests);

    CompletionStage<List<A>> allAsync(List<Q> requests);

    /**
     * Whether {@code other}, a call for the record of {@code carrier}, would read what it reads.
     */
    boolean mayShare(Q carrier, Q other);

    /** Whether the answer changed nothing, so that a call that would read the same may share it. */
    boolean shareable(A answer);
  }

  private final Calls<Q, A> calls;
  private final int maxBatch;
  private final int atOnce;
  private final int maxInFlight;
  private final ArrayDeque<Pending<Q, A>> queue = new ArrayDeque<>();

  /**
   * How many calls (alone or batched) are under way; guarded by {@code queue}. More than one only
   * while a full batch waited when it went.
   */
  private int inFlight;

  /**
   * @param maxBatch the most calls one batch carries; a full batch waiting goes alongside the one
   *     under way
   * @param atOnce how many batches may be under way before a call waits for one to return (one:
   *     calls made while a batch is under way go together in the next)
   * @param maxInFlight how many batches may be under way at once, full ones side by side
   */
  Batcher(Calls<Q, A> calls, int maxBatch, int atOnce, int maxInFlight) {
    if (atOnce < 1 || atOnce > maxInFlight) {
      throw new IllegalArgumentException(
          "atOnce must be between 1 and " + maxInFlight + ", was " + atOnce);
    }
    this.calls = calls;
    this.maxBatch = maxBatch;
    this.atOnce = atOnce;
    this.maxInFlight = maxInFlight;
  }

  /** How many calls wait for the batch under way to return; for tests. */
  int queued() {
    synchronized (queue) {
      return queue.size();
    }
  }

  /** Makes the call on this thread, alone or in a batch this thread or another leads. */
  A call(Q request) {
    Pending<Q, A> own = new Pending<>(request, true);
    List<Pending<Q, A>> batch = enqueue(own);
    if (batch == null) {
      batch = own.awaitTurn(); // null: another caller's batch answered it
    }
    if (batch != null) {
      lead(batch);
    }
    try {
      return own.answer.join();
    } catch (CompletionException e) {
      throw rethrow(e.getCause());
    }
  }

  /** Makes the call without holding a thread while the store answers. */
  CompletionStage<A> callAsync(Q request) {
    Pending<Q, A> own = new Pending<>(request, false);
    List<Pending<Q, A>> batch = enqueue(own);
    if (batch != null) {
      leadAsync(batch);
    }
    return own.answer;
  }

  /**
   * Queues the call; returns the batch to lead if the store was idle (just this call). A call that
   * makes a full batch wait sends one alongside the batch under way, if fewer than {@code
   * maxInFlight} are.
   */
  private @Nullable List<Pending<Q, A>> enqueue(Pending<Q, A> pending) {
    List<Pending<Q, A>> alongside;
    synchronized (queue) {
      if (inFlight < atOnce) {
        inFlight++;
        List<Pending<Q, A>> alone = new ArrayList<>(1);
        alone.add(pending);
        return alone;
      }
      queue.add(pending);
      if (inFlight == maxInFlight || queue.size() < maxBatch) {
        return null;
      }
      inFlight++;
      alongside = takeBatch();
    }
    handOut(alongside);
    return null;
  }

  /** Runs the batch on this thread, answers it, and passes the next one on. */
  private void lead(List<Pending<Q, A>> batch) {
    Step.block(leading(batch));
  }

  /** {@link #lead}, with no thread waiting for the store. */
  private void leadAsync(List<Pending<Q, A>> batch) {
    Step.start(() -> leading(batch));
  }

  /**
   * The batch's call, its answers handed out, and the next batch passed on: the one rule both ways
   * of leading follow. A failure other than the store being unavailable is one record's: the calls
   * are then made one by one, so that it reaches only the caller it belongs to. Asynchronously, on
   * whatever thread completed the batch, which may be the store client's event loop: no call is
   * ever made blocking there.
   */
  private Step<Boolean> leading(List<Pending<Q, A>> batch) {
    return Step.call(
        batchCall(batch),
        answered -> {
          if (!answered.failed()) {
            answer(batch, answered.value());
          } else if (batch.size() > 1
              && !(answered.failure() instanceof StoreUnavailableException)) {
            requeueRiders(batch);
            return eachAlone(batch, 0);
          } else {
            failAll(batch, answered.failure());
          }
          next();
          return Step.done(true);
        });
  }

  private Io<List<A>> batchCall(List<Pending<Q, A>> batch) {
    if (batch.size() == 1) {
      Q request = batch.get(0).request;
      return Io.of(
          () -> List.of(calls.one(request)), () -> calls.oneAsync(request).thenApply(List::of));
    }
    List<Q> requests = requests(batch);
    return Io.of(() -> calls.all(requests), () -> calls.allAsync(requests));
  }

  /** The calls of a batch that failed, made one after another from the {@code i}-th on. */
  private Step<Boolean> eachAlone(List<Pending<Q, A>> batch, int i) {
    if (i == batch.size()) {
      next();
      return Step.done(true);
    }
    Pending<Q, A> p = batch.get(i);
    return Step.call(
        Io.of(() -> calls.one(p.request), () -> calls.oneAsync(p.request)),
        one -> {
          if (one.failed()) {
            p.answer.completeExceptionally(one.failure());
          } else {
            p.answer.complete(one.value());
          }
          return eachAlone(batch, i + 1);
        });
  }

  /**
   * Takes the next batch, or goes idle; a batch that returns while another is under way leaves
   * fewer than a full batch of waiting calls to that one, so that side-by-side batches last only
   * while full ones wait.
   */
  private void next() {
    List<Pending<Q, A>> batch;
    synchronized (queue) {
      if (queue.isEmpty() || (inFlight > atOnce && queue.size() < maxBatch)) {
        inFlight--;
        return;
      }
      batch = takeBatch();
    }
    handOut(batch);
  }

  /** Hands a batch to a blocking caller in it to lead, or sends it asynchronously. */
  private void handOut(List<Pending<Q, A>> batch) {
    for (Pending<Q, A> p : batch) {
      if (p.turn != null) {
        p.turn.complete(batch);
        return;
      }
    }
    leadAsync(batch);
  }

  /**
   * Takes the next batch from the queue, in arrival order, up to {@code maxBatch} calls and at most
   * one per record: a later call for a record already in the batch rides along with it if it would
   * read the same (and no call for the record is left queued before it), or stays queued for the
   * next one, where the store answers it as a call made just after the first (in flight, a replay,
   * a mismatch), never with the first's lease. One statement claiming a repeated record would grant
   * both copies the same lease. The first call queued is always taken, so the queue never stalls.
   */
  private List<Pending<Q, A>> takeBatch() {
    List<Pending<Q, A>> batch = new ArrayList<>(Math.min(queue.size(), maxBatch));
    Map<RecordId, Pending<Q, A>> carriers = new HashMap<>();
    // Records with a call left queued: later calls for them stay behind it, in arrival order.
    Set<RecordId> held = new HashSet<>();
    for (Iterator<Pending<Q, A>> it = queue.iterator(); it.hasNext() && batch.size() < maxBatch; ) {
      Pending<Q, A> p = it.next();
      RecordId record = calls.record(p.request);
      Pending<Q, A> carrier = carriers.putIfAbsent(record, p);
      if (carrier == null) {
        it.remove();
        batch.add(p);
      } else if (!held.contains(record) && calls.mayShare(carrier.request, p.request)) {
        it.remove();
        carrier.riders.add(p);
      } else {
        held.add(record);
      }
    }
    return batch;
  }

  /** The riders of a batch whose answers they may not share, back to the head of the queue. */
  private void requeueRiders(List<Pending<Q, A>> batch) {
    synchronized (queue) {
      for (int i = batch.size() - 1; i >= 0; i--) {
        List<Pending<Q, A>> riders = batch.get(i).riders;
        for (int j = riders.size() - 1; j >= 0; j--) {
          queue.addFirst(riders.get(j));
        }
        riders.clear();
      }
    }
  }

  private void answer(List<Pending<Q, A>> batch, List<A> answers) {
    if (answers.size() != batch.size()) {
      // A broken store: which calls it made is unknown, so none is made again.
      failAll(
          batch,
          new IllegalStateException(
              "the store answered " + answers.size() + " of " + batch.size() + " calls"));
      return;
    }
    List<Pending<Q, A>> back = new ArrayList<>();
    for (int i = 0; i < batch.size(); i++) {
      Pending<Q, A> p = batch.get(i);
      A answer = answers.get(i);
      if (calls.shareable(answer)) {
        for (Pending<Q, A> rider : p.riders) {
          rider.answer.complete(answer);
        }
        p.riders.clear();
      } else if (!p.riders.isEmpty()) {
        back.add(p);
      }
    }
    requeueRiders(back);
    for (int i = 0; i < batch.size(); i++) {
      batch.get(i).answer.complete(answers.get(i));
    }
  }

  private void failAll(List<Pending<Q, A>> batch, Throwable failure) {
    requeueRiders(batch);
    for (Pending<Q, A> p : batch) {
      p.answer.completeExceptionally(failure);
    }
  }

  private static <Q, A> List<Q> requests(List<Pending<Q, A>> batch) {
    List<Q> requests = new ArrayList<>(batch.size());
    for (Pending<Q, A> p : batch) {
      requests.add(p.request);
    }
    return requests;
  }

  private static RuntimeException rethrow(@Nullable Throwable cause) {
    if (cause instanceof RuntimeException e) {
      throw e;
    }
    if (cause instanceof Error e) {
      throw e;
    }
    throw new IllegalStateException("a store call failed", cause);
  }

  /** One caller's call: its request, its answer, and for a blocking caller, its turn to lead. */
  private static final class Pending<Q, A> {
    final Q request;
    final CompletableFuture<A> answer = new CompletableFuture<>();

    /**
     * Calls for the same record taken from the queue with this one, to share its answer or go back;
     * touched under the queue's lock when taken, then by whoever answers the batch.
     */
    final List<Pending<Q, A>> riders = new ArrayList<>(0);

    /** Completed with a batch for this caller to lead; null for an asynchronous caller. */
    final @Nullable CompletableFuture<List<Pending<Q, A>>> turn;

    Pending(Q request, boolean blocking) {
      this.request = request;
      this.turn = blocking ? new CompletableFuture<>() : null;
    }

    /** Waits until the call is answered (null) or this caller must lead a batch (returned). */
    @Nullable List<Pending<Q, A>> awaitTurn() {
      CompletableFuture<List<Pending<Q, A>>> t = Objects.requireNonNull(turn, "turn");
      try {
        CompletableFuture.anyOf(answer, t).join();
      } catch (CompletionException answeredWithAFailure) {
        // the answer is there; the caller reads it
      }
      return t.isDone() ? t.join() : null;
    }
  }
}
