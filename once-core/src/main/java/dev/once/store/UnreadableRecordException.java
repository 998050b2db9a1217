package dev.once.store;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A stored record cannot be read back. Either its payload (its result or recovery point) cannot be
 * decrypted: it was encrypted with a key the {@link Keyring} no longer has, it fails authentication
 * (tampered with, or moved from another record), or it is not in a format this version reads;
 * {@link EncryptingStore} throws those. Or the record itself is not in a form this version knows
 * ({@link Reason#RECORD_FORMAT}): a state that a later version added, written while two versions
 * share the store, or something else written under the store's names; every store throws that
 * rather than a parse error. The engine answers such a record as "response unavailable" and never
 * runs the operation again (see {@code docs/security.md}): a record exists, so the operation may
 * have run.
 */
public final class UnreadableRecordException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Why the record cannot be read. */
  public enum Reason {
    /** The record names a key id the keyring does not hold: restore the key to read it. */
    KEY_MISSING,
    /**
     * Authentication failed: the bytes were changed, moved from another record, or the key differs.
     */
    AUTHENTICATION_FAILED,
    /** The bytes are not an encrypted payload this version can read. */
    MALFORMED,
    /**
     * The record is not in a form this version knows: a state or field that a later version wrote,
     * or something else under the store's names. The version that wrote it can read it.
     */
    RECORD_FORMAT
  }

  private final transient RecordId id;
  private final Reason reason;
  private final @Nullable String keyId;

  UnreadableRecordException(
      RecordId id, Reason reason, @Nullable String keyId, @Nullable Throwable cause) {
    super(
        (reason == Reason.RECORD_FORMAT ? "record " : "the payload of record ")
            + id
            + " is unreadable: "
            + reason
            + (keyId == null ? "" : " (key id '" + keyId + "')")
            + (reason == Reason.RECORD_FORMAT && cause != null
                ? " (" + cause.getMessage() + ")"
                : ""),
        cause);
    this.id = Objects.requireNonNull(id, "id");
    this.reason = Objects.requireNonNull(reason, "reason");
    this.keyId = keyId;
  }

  /**
   * For a store that cannot parse the record it read at {@code id}: the record is not in a form
   * this version knows ({@link Reason#RECORD_FORMAT}), and {@code cause} says what it could not
   * parse. Its message must not hold the record's payload.
   */
  public static UnreadableRecordException recordFormat(RecordId id, RuntimeException cause) {
    return new UnreadableRecordException(id, Reason.RECORD_FORMAT, null, cause);
  }

  /** The record that is unreadable. */
  public RecordId id() {
    return id;
  }

  public Reason reason() {
    return reason;
  }

  /**
   * The key id the payload names, or {@code null} if the payload is malformed or the record is not
   * in a form this version knows.
   */
  public @Nullable String keyId() {
    return keyId;
  }
}
