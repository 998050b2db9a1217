package dev.once.store;

import dev.once.internal.Arguments;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;

/**
 * One of the three fenced writes that finish a lease, as a value, so that many can go to the store
 * in one {@link IdempotencyStore#finishAll} call.
 *
 * @param kind which write
 * @param id the record
 * @param token the lease's token; the write applies only while it is the record's
 * @param payload the result a completion or final failure keeps; empty for a release
 * @param ttl how long a completed or failed record lives from the write; ignored by a release
 */
public record Finish(Kind kind, RecordId id, long token, byte[] payload, Duration ttl) {

  /** The three ways to finish a lease. */
  public enum Kind {
    /** {@link IdempotencyStore#complete}. */
    COMPLETE,
    /** {@link IdempotencyStore#failFinal}. */
    FAIL_FINAL,
    /** {@link IdempotencyStore#release}. */
    RELEASE
  }

  // Why a release still carries a ttl: one shape for all three keeps the batch a plain list, and
  // a store groups by kind; the value is never read for a release.
  private static final Duration UNUSED = Duration.ofSeconds(1);
  private static final byte[] NOTHING = new byte[0];

  public Finish {
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(id, "id");
    Objects.requireNonNull(payload, "payload");
    Arguments.positive("ttl", ttl);
  }

  /** Marks the record completed with {@code result}, living {@code ttl} from the write. */
  public static Finish complete(RecordId id, long token, byte[] result, Duration ttl) {
    return new Finish(Kind.COMPLETE, id, token, result, ttl);
  }

  /** Marks the record failed finally with {@code result}, living {@code ttl} from the write. */
  public static Finish failFinal(RecordId id, long token, byte[] result, Duration ttl) {
    return new Finish(Kind.FAIL_FINAL, id, token, result, ttl);
  }

  /** Deletes the in-progress record so its key can be claimed afresh. */
  public static Finish release(RecordId id, long token) {
    return new Finish(Kind.RELEASE, id, token, NOTHING, UNUSED);
  }

  /** Applies this write alone, with the store's blocking call. */
  public boolean applyTo(IdempotencyStore store) {
    return switch (kind) {
      case COMPLETE -> store.complete(id, token, payload, ttl);
      case FAIL_FINAL -> store.failFinal(id, token, payload, ttl);
      case RELEASE -> store.release(id, token);
    };
  }

  /** Applies this write alone, with the store's asynchronous call. */
  public CompletionStage<Boolean> applyAsyncTo(IdempotencyStore store, Executor blocking) {
    return switch (kind) {
      case COMPLETE -> store.completeAsync(id, token, payload, ttl, blocking);
      case FAIL_FINAL -> store.failFinalAsync(id, token, payload, ttl, blocking);
      case RELEASE -> store.releaseAsync(id, token, blocking);
    };
  }
}
