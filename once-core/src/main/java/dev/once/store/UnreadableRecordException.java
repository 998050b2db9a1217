package dev.once.store;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * A stored record's payload (its result or recovery point) cannot be read back: it was encrypted
 * with a key the {@link Keyring} no longer has, it fails authentication (tampered with, or moved
 * from another record), or it is not in a format this version reads. Thrown by {@link
 * EncryptingStore}; the engine answers such a record as "response unavailable" and never runs the
 * operation again (see {@code docs/security.md}).
 */
public final class UnreadableRecordException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  /** Why the payload cannot be read. */
  public enum Reason {
    /** The record names a key id the keyring does not hold: restore the key to read it. */
    KEY_MISSING,
    /**
     * Authentication failed: the bytes were changed, moved from another record, or the key differs.
     */
    AUTHENTICATION_FAILED,
    /** The bytes are not an encrypted payload this version can read. */
    MALFORMED
  }

  private final transient RecordId id;
  private final Reason reason;
  private final @Nullable String keyId;

  UnreadableRecordException(
      RecordId id, Reason reason, @Nullable String keyId, @Nullable Throwable cause) {
    super(
        "the payload of record "
            + id
            + " is unreadable: "
            + reason
            + (keyId == null ? "" : " (key id '" + keyId + "')"),
        cause);
    this.id = Objects.requireNonNull(id, "id");
    this.reason = Objects.requireNonNull(reason, "reason");
    this.keyId = keyId;
  }

  /** The record whose payload is unreadable. */
  public RecordId id() {
    return id;
  }

  public Reason reason() {
    return reason;
  }

  /** The key id the payload names, or {@code null} if the payload is malformed. */
  public @Nullable String keyId() {
    return keyId;
  }
}
