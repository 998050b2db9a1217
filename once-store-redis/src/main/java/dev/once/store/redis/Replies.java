package dev.once.store.redis;

import dev.once.Fingerprint;
import dev.once.store.ClaimResult;
import dev.once.store.ClaimResult.Claimed;
import dev.once.store.ClaimResult.Existing;
import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.StoreUnavailableException;
import dev.once.store.UnreadableRecordException;
import io.lettuce.core.RedisCommandExecutionException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;

/**
 * Turns the scripts' replies into the SPI's values. The reply shapes are the scripts' own: a claim
 * answers {@code {1, token, leaseUntil, stolen, recoveryPoint}} or a record; a record is {@code {2,
 * state, fingerprint, token, leaseUntil, expiresAt, recoveryPoint, result, now, createdAt}}; an
 * absent record is {@code {0}}; a listed one (the in-flight scan) is {@code {2, state, fingerprint,
 * token, leaseUntil, expiresAt, hasRecoveryPoint, now, createdAt}}; a batch script's failure for
 * one key is {@code {3, error}}. Times are microseconds; absent fields are {@code null}.
 */
final class Replies {

  private static final long CLAIMED = 1;
  private static final long RECORD = 2;
  private static final long FAILED = 3;

  private Replies() {}

  static ClaimResult claim(RecordId id, List<Object> reply) {
    if (code(reply) == CLAIMED) {
      boolean stolen = asLong(reply.get(3)) == 1;
      return new Claimed(
          asLong(reply.get(1)),
          Micros.toInstant(asLong(reply.get(2))),
          stolen,
          stolen ? (byte[]) reply.get(4) : null);
    }
    return new Existing(record(id, reply));
  }

  /**
   * The failure a batch script reports for one claim ({@code {3, error}}: the key holds something
   * that is not a record's hash), or {@code null} for any other reply: {@link #foreign} for a key
   * of another type, else {@link StoreUnavailableException}.
   */
  static @Nullable RuntimeException claimFailure(RecordId id, List<?> reply) {
    String why = failureMessage(reply);
    if (why == null) {
      return null;
    }
    return isWrongType(why) ? foreign(id, why) : unavailable(id, "claim", why);
  }

  /**
   * The failure a batch script reports for one finishing write, or {@code null} for any other
   * reply: always {@link StoreUnavailableException}, since a lease cannot be held on such a key.
   */
  static @Nullable StoreUnavailableException finishFailure(RecordId id, List<?> reply) {
    String why = failureMessage(reply);
    return why == null ? null : unavailable(id, "finish", why);
  }

  private static @Nullable String failureMessage(List<?> reply) {
    if (reply.isEmpty() || !Long.valueOf(FAILED).equals(reply.get(0))) {
      return null;
    }
    Object message = reply.get(1);
    return message instanceof byte[] b
        ? new String(b, StandardCharsets.UTF_8)
        : String.valueOf(message);
  }

  private static StoreUnavailableException unavailable(RecordId id, String operation, String why) {
    return new StoreUnavailableException("Redis could not " + operation + " " + id + ": " + why);
  }

  /**
   * What a claim or a read of {@code id} failed with: {@link #foreign} if Redis refused the script
   * because the record's key holds a value of another type, else {@code failure} itself.
   */
  static RuntimeException readFailure(RecordId id, Throwable failure) {
    Throwable cause =
        failure instanceof CompletionException && failure.getCause() != null
            ? failure.getCause()
            : failure;
    for (Throwable t = cause; t != null; t = t.getCause()) {
      if (t instanceof RedisCommandExecutionException e
          && e.getMessage() != null
          && isWrongType(e.getMessage())) {
        return foreign(id, e.getMessage());
      }
    }
    return cause instanceof RuntimeException r ? r : new CompletionException(cause);
  }

  /**
   * The record's key holds a value of another type: something else wrote there (another application
   * on the same prefix, an operator). It is a record this version cannot read, never an outage: a
   * claim that took it for one would let a fail-open policy run the work unguarded on every retry.
   * The engine answers it as a record that may have run.
   */
  private static UnreadableRecordException foreign(RecordId id, String why) {
    return UnreadableRecordException.recordFormat(
        id, new IllegalStateException("the record's key holds a value of another type: " + why));
  }

  private static boolean isWrongType(String message) {
    return message.startsWith("WRONGTYPE");
  }

  static Optional<IdempotencyRecord> get(RecordId id, List<Object> reply) {
    return code(reply) == RECORD ? Optional.of(record(id, reply)) : Optional.empty();
  }

  /**
   * The record a script read. A hash this version cannot parse (a state a later version added, or
   * fields something else wrote) is {@link UnreadableRecordException}, never a parse error: the
   * engine answers it, and a batch undoes around it.
   */
  private static IdempotencyRecord record(RecordId id, List<Object> reply) {
    if (code(reply) != RECORD) {
      throw new IllegalStateException(
          "unexpected reply code " + code(reply) + " from Redis for " + id);
    }
    try {
      return parsed(id, reply);
    } catch (RuntimeException e) {
      throw UnreadableRecordException.recordFormat(id, e);
    }
  }

  private static IdempotencyRecord parsed(RecordId id, List<Object> reply) {
    return new IdempotencyRecord(
        id,
        state((byte[]) reply.get(1)),
        Fingerprint.parse(new String((byte[]) reply.get(2), StandardCharsets.US_ASCII)),
        asLong(reply.get(3)),
        Micros.toInstant(asLong(reply.get(4))),
        Micros.toInstant(asLong(reply.get(5))),
        (byte[]) reply.get(6),
        (byte[]) reply.get(7),
        Micros.toInstant(asLong(reply.get(8))),
        createdAt(reply, 9));
  }

  /** A record of the in-flight scan, or empty if the script found none to list. */
  static Optional<IdempotencyRecord> listed(RecordId id, List<Object> reply) {
    if (code(reply) != RECORD) {
      return Optional.empty();
    }
    return Optional.of(
        new IdempotencyRecord(
            id,
            state((byte[]) reply.get(1)),
            Fingerprint.parse(new String((byte[]) reply.get(2), StandardCharsets.US_ASCII)),
            asLong(reply.get(3)),
            Micros.toInstant(asLong(reply.get(4))),
            Micros.toInstant(asLong(reply.get(5))),
            asLong(reply.get(6)) == 1 ? NO_BYTES : null,
            null,
            Micros.toInstant(asLong(reply.get(7))),
            createdAt(reply, 8)));
  }

  private static final byte[] NO_BYTES = new byte[0];

  /**
   * The creation time at {@code index}; null when the hash has none (written before it was kept).
   */
  private static @Nullable Instant createdAt(List<Object> reply, int index) {
    Object value = reply.size() > index ? reply.get(index) : null;
    return value == null ? null : Micros.toInstant(asLong(value));
  }

  private static RecordState state(byte[] code) {
    if (code != null && code.length == 1) {
      switch (code[0]) {
        case 'P':
          return RecordState.IN_PROGRESS;
        case 'C':
          return RecordState.COMPLETED;
        case 'F':
          return RecordState.FAILED_FINAL;
        default:
          break;
      }
    }
    throw new IllegalStateException("its hash holds a state this version does not know");
  }

  private static long code(List<Object> reply) {
    if (reply == null || reply.isEmpty()) {
      throw new IllegalStateException("empty reply from a store script");
    }
    return asLong(reply.get(0));
  }

  private static long asLong(Object value) {
    if (value instanceof Long l) {
      return l;
    }
    throw new IllegalStateException("expected an integer in a store script's reply, got " + value);
  }
}
