package dev.once.store.dynamodb;

import dev.once.Fingerprint;
import dev.once.store.IdempotencyRecord;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.UnreadableRecordException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;

/**
 * The item layout: one item per record, keyed by the scope (partition key) and the idempotency key
 * (sort key), so no encoding is needed to keep (scope, key) pairs apart. Times are microseconds of
 * the store's clock; {@value #TTL} is the DynamoDB TTL attribute, in epoch seconds, at which
 * DynamoDB may delete the item by itself (lazily: up to days later, which is why every operation
 * checks {@value #EXPIRES_AT} too).
 *
 * <p>A released or purged record stays as a tombstone ({@value #RELEASED}) that keeps only the
 * key's last token until its TTL, so the next lease is granted a larger one.
 */
final class Items {

  static final String SCOPE = "scope";
  static final String KEY = "idempotency_key";
  static final String STATE = "state";
  static final String FINGERPRINT = "fingerprint";
  static final String TOKEN = "token";
  static final String LEASE_UNTIL = "lease_until_us";
  static final String EXPIRES_AT = "expires_at_us";
  static final String RECOVERY_POINT = "recovery_point";
  static final String RESULT = "result";
  static final String TTL = "ttl";

  /**
   * When the first lease was granted (a steal keeps it); absent on items written before the store
   * recorded it.
   */
  static final String CREATED_AT = "created_at_us";

  static final String IN_PROGRESS = "IN_PROGRESS";
  static final String RELEASED = "RELEASED";

  /**
   * Attribute names, values and per-item overhead a record needs besides its scope, key and value.
   */
  static final int FIXED_OVERHEAD_BYTES = 300;

  private Items() {}

  static Map<String, AttributeValue> key(RecordId id) {
    Map<String, AttributeValue> key = new HashMap<>(4);
    key.put(SCOPE, s(id.scope().value()));
    key.put(KEY, s(id.key().value()));
    return key;
  }

  /**
   * The size DynamoDB counts for a record of this id carrying a value of {@code valueBytes},
   * rounded up.
   */
  static int estimatedSize(RecordId id, int valueBytes) {
    return FIXED_OVERHEAD_BYTES
        + id.scope().value().getBytes(StandardCharsets.UTF_8).length
        + id.key().value().length()
        + valueBytes;
  }

  static boolean isLive(@Nullable Map<String, AttributeValue> item, long nowMicros) {
    if (item == null || item.isEmpty() || !item.containsKey(STATE)) {
      return false;
    }
    String state = item.get(STATE).s();
    return !RELEASED.equals(state) && nowMicros < number(item, EXPIRES_AT);
  }

  static boolean isStealable(
      Map<String, AttributeValue> item, long nowMicros, Fingerprint fingerprint) {
    return IN_PROGRESS.equals(string(item, STATE))
        && nowMicros >= number(item, LEASE_UNTIL)
        && fingerprint.encoded().equals(string(item, FINGERPRINT));
  }

  /**
   * The record in {@code item}. An item this version cannot parse (a state a later version added,
   * or attributes something else wrote) is {@link UnreadableRecordException}, never a parse error:
   * the engine answers it, and a batch undoes around it.
   */
  static IdempotencyRecord toRecord(RecordId id, Map<String, AttributeValue> item, long nowMicros) {
    try {
      return parsed(id, item, nowMicros);
    } catch (RuntimeException e) {
      throw UnreadableRecordException.recordFormat(id, e);
    }
  }

  private static IdempotencyRecord parsed(
      RecordId id, Map<String, AttributeValue> item, long nowMicros) {
    return new IdempotencyRecord(
        id,
        RecordState.valueOf(string(item, STATE)),
        Fingerprint.parse(string(item, FINGERPRINT)),
        number(item, TOKEN),
        instant(number(item, LEASE_UNTIL)),
        instant(number(item, EXPIRES_AT)),
        bytes(item, RECOVERY_POINT),
        bytes(item, RESULT),
        instant(nowMicros),
        createdAt(item));
  }

  /** The item's creation time, or null if it was written before the store recorded it. */
  static @Nullable Instant createdAt(Map<String, AttributeValue> item) {
    AttributeValue value = item.get(CREATED_AT);
    return value == null || value.n() == null ? null : instant(Long.parseLong(value.n()));
  }

  /**
   * A string attribute every record item has; a NullPointerException names it if the item lacks it.
   */
  static String string(Map<String, AttributeValue> item, String name) {
    return Objects.requireNonNull(item.get(name), name).s();
  }

  static byte @Nullable [] bytes(Map<String, AttributeValue> item, String name) {
    AttributeValue value = item.get(name);
    return value == null ? null : BinaryValues.decode(value.b());
  }

  static long number(Map<String, AttributeValue> item, String name) {
    AttributeValue value = item.get(name);
    if (value == null || value.n() == null) {
      throw new IllegalStateException(
          "a record item has no number " + name + "; was it written by something else?");
    }
    return Long.parseLong(value.n());
  }

  static AttributeValue s(String value) {
    return AttributeValue.fromS(value);
  }

  static AttributeValue n(long value) {
    return AttributeValue.fromN(Long.toString(value));
  }

  static Instant instant(long micros) {
    return Instant.ofEpochSecond(
        Math.floorDiv(micros, 1_000_000L), Math.floorMod(micros, 1_000_000L) * 1000L);
  }
}
