package dev.once.store;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Executor;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.SecretKey;
import javax.crypto.spec.GCMParameterSpec;

/**
 * Encrypts what a store keeps of a request's outcome — results and recovery points — with AES-GCM,
 * so that a copy of the store (a backup, a replica, a stolen disk) reveals no response bodies.
 * Wraps any {@link IdempotencyStore}:
 *
 * <pre>{@code
 * IdempotencyStore store = EncryptingStore.of(PostgresStore.builder(ds).build(), Keyring.parse(env("ONCE_KEYS")));
 * }</pre>
 *
 * <p>Each payload is stored as: a format byte {@code 0xE1}; the key id's length (1 byte) and ASCII
 * bytes; a random 96-bit nonce; the ciphertext and its 128-bit tag. The associated data binds the
 * header, the kind of payload (result or recovery point) and the record's scope and key, so a
 * payload copied onto another record, or swapped between result and recovery point, fails to
 * decrypt. Scopes, keys, fingerprints, tokens and times stay in clear: stores need them to find and
 * fence records.
 *
 * <p>A payload that cannot be decrypted — its key is not in the {@link Keyring}, or it fails
 * authentication — throws {@link UnreadableRecordException} from {@link #claim} and {@link #get};
 * the engine answers "response unavailable" and never runs the operation again.
 *
 * <p>Nonces are random, so one key should encrypt fewer than 2<sup>32</sup> payloads: rotate keys
 * (see {@link Keyring}) well before that.
 */
public final class EncryptingStore extends ForwardingStore {

  /**
   * The first byte of every encrypted payload; never the first byte of the engine's own framing.
   */
  static final byte FORMAT = (byte) 0xE1;

  static final int NONCE_BYTES = 12;
  static final int TAG_BITS = 128;
  private static final byte RESULT = 'R';
  private static final byte RECOVERY_POINT = 'P';
  private static final SecureRandom RANDOM = new SecureRandom();
  private static final ThreadLocal<Cipher> CIPHERS =
      ThreadLocal.withInitial(
          () -> {
            try {
              return Cipher.getInstance("AES/GCM/NoPadding");
            } catch (GeneralSecurityException e) {
              throw new IllegalStateException("AES/GCM is required of every Java platform", e);
            }
          });

  private final IdempotencyStore store;
  private final Keyring keyring;
  private final byte[] activeHeader;
  private final boolean readPlaintext;

  private EncryptingStore(Builder b) {
    this.store = b.store;
    this.keyring = b.keyring;
    this.activeHeader = header(keyring.activeId());
    this.readPlaintext = b.readPlaintext;
  }

  /** Encrypts everything {@code store} keeps with the keyring's active key. */
  public static EncryptingStore of(IdempotencyStore store, Keyring keyring) {
    return builder(store, keyring).build();
  }

  public static Builder builder(IdempotencyStore store, Keyring keyring) {
    return new Builder(store, keyring);
  }

  @Override
  protected IdempotencyStore delegate() {
    return store;
  }

  /** The keyring, for operators: which key writes, which keys read. */
  public Keyring keyring() {
    return keyring;
  }

  @Override
  public ClaimResult claim(ClaimRequest request) {
    return opened(request, store.claim(request));
  }

  private ClaimResult opened(ClaimRequest request, ClaimResult result) {
    return result.accept(
        new ClaimResult.Visitor<ClaimResult>() {
          @Override
          public ClaimResult claimed(ClaimResult.Claimed c) {
            byte[] sealed = c.recoveryPoint();
            return sealed == null
                ? c
                : new ClaimResult.Claimed(
                    c.token(),
                    c.leaseUntil(),
                    c.stolen(),
                    open(request.id(), RECOVERY_POINT, sealed));
          }

          @Override
          public ClaimResult existing(ClaimResult.Existing e) {
            return new ClaimResult.Existing(open(e.record()));
          }
        });
  }

  @Override
  public Optional<IdempotencyRecord> get(RecordId id) {
    return store.get(id).map(this::open);
  }

  @Override
  public boolean checkpoint(
      RecordId id, long token, byte[] recoveryPoint, java.time.Duration lease) {
    return store.checkpoint(id, token, seal(id, RECOVERY_POINT, recoveryPoint), lease);
  }

  @Override
  public boolean complete(RecordId id, long token, byte[] result, java.time.Duration ttl) {
    return store.complete(id, token, seal(id, RESULT, result), ttl);
  }

  @Override
  public boolean failFinal(RecordId id, long token, byte[] result, java.time.Duration ttl) {
    return store.failFinal(id, token, seal(id, RESULT, result), ttl);
  }

  // The asynchronous calls go to the wrapped store's own, so that encrypting keeps what the store
  // offers: Redis and the embedded store answer without a thread of the caller's waiting, where
  // the interface's defaults would hold one of the caller's blocking executor for every call.
  // Payloads are sealed before a call and opened on the thread that completes it: AES-GCM of a
  // result is short and never waits.

  @Override
  public CompletionStage<ClaimResult> claimAsync(ClaimRequest request, Executor blocking) {
    return store.claimAsync(request, blocking).thenApply(result -> opened(request, result));
  }

  @Override
  public CompletionStage<Optional<IdempotencyRecord>> getAsync(RecordId id, Executor blocking) {
    return store.getAsync(id, blocking).thenApply(found -> found.map(this::open));
  }

  @Override
  public CompletionStage<Boolean> completeAsync(
      RecordId id, long token, byte[] result, java.time.Duration ttl, Executor blocking) {
    return sealed(id, RESULT, result)
        .thenCompose(ciphertext -> store.completeAsync(id, token, ciphertext, ttl, blocking));
  }

  @Override
  public CompletionStage<Boolean> failFinalAsync(
      RecordId id, long token, byte[] result, java.time.Duration ttl, Executor blocking) {
    return sealed(id, RESULT, result)
        .thenCompose(ciphertext -> store.failFinalAsync(id, token, ciphertext, ttl, blocking));
  }

  @Override
  public CompletionStage<Boolean> releaseAsync(RecordId id, long token, Executor blocking) {
    return store.releaseAsync(id, token, blocking);
  }

  @Override
  public CompletionStage<Boolean> endLeaseAsync(RecordId id, long token, Executor blocking) {
    return store.endLeaseAsync(id, token, blocking);
  }

  @Override
  public CompletionStage<Set<LeaseToken>> heartbeatAsync(
      Collection<LeaseToken> leases, java.time.Duration lease, Executor blocking) {
    return store.heartbeatAsync(leases, lease, blocking);
  }

  /** {@link #seal}, as a stage: a failure is the stage's, as the store's own would be. */
  private CompletionStage<byte[]> sealed(RecordId id, byte kind, byte[] plaintext) {
    try {
      return CompletableFuture.completedFuture(seal(id, kind, plaintext));
    } catch (RuntimeException e) {
      return CompletableFuture.failedFuture(e);
    }
  }

  /**
   * Listed records carry no payloads by contract; any bytes a store hands back anyway are sealed,
   * so they are blanked here rather than decrypted: a listing never fails on a key that is gone.
   */
  @Override
  public InFlight inFlight(java.time.Duration olderThan, int limit) {
    InFlight found = store.inFlight(olderThan, limit);
    List<IdempotencyRecord> blanked = new ArrayList<>(found.records().size());
    for (IdempotencyRecord r : found.records()) {
      blanked.add(
          r.recoveryPoint() == null || r.recoveryPoint().length == 0
              ? r
              : new IdempotencyRecord(
                  r.id(),
                  r.state(),
                  r.fingerprint(),
                  r.token(),
                  r.leaseUntil(),
                  r.expiresAt(),
                  new byte[0],
                  null,
                  r.observedAt(),
                  r.createdAt()));
    }
    return new InFlight(blanked, found.complete());
  }

  private IdempotencyRecord open(IdempotencyRecord r) {
    if (r.result() == null && r.recoveryPoint() == null) {
      return r;
    }
    RecordId id = r.id();
    byte[] result = r.result() == null ? null : open(id, RESULT, r.result());
    byte[] recoveryPoint =
        r.recoveryPoint() == null ? null : open(id, RECOVERY_POINT, r.recoveryPoint());
    return new IdempotencyRecord(
        id,
        r.state(),
        r.fingerprint(),
        r.token(),
        r.leaseUntil(),
        r.expiresAt(),
        recoveryPoint,
        result,
        r.observedAt(),
        r.createdAt());
  }

  private byte[] seal(RecordId id, byte kind, byte[] plaintext) {
    Objects.requireNonNull(plaintext, "payload");
    byte[] nonce = new byte[NONCE_BYTES];
    RANDOM.nextBytes(nonce);
    byte[] out = new byte[activeHeader.length + NONCE_BYTES + plaintext.length + TAG_BITS / 8];
    System.arraycopy(activeHeader, 0, out, 0, activeHeader.length);
    System.arraycopy(nonce, 0, out, activeHeader.length, NONCE_BYTES);
    try {
      Cipher cipher = CIPHERS.get();
      cipher.init(Cipher.ENCRYPT_MODE, keyring.activeKey(), new GCMParameterSpec(TAG_BITS, nonce));
      cipher.updateAAD(associatedData(activeHeader, kind, id));
      cipher.doFinal(plaintext, 0, plaintext.length, out, activeHeader.length + NONCE_BYTES);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("AES-GCM encryption failed", e);
    }
    return out;
  }

  private byte[] open(RecordId id, byte kind, byte[] stored) {
    if (stored.length == 0 || stored[0] != FORMAT) {
      if (readPlaintext) {
        return stored; // written before encryption was turned on
      }
      throw new UnreadableRecordException(
          id, UnreadableRecordException.Reason.MALFORMED, null, null);
    }
    int idLength = stored.length > 1 ? stored[1] & 0xFF : 0;
    int headerLength = 2 + idLength;
    if (idLength == 0
        || idLength > Keyring.MAX_ID_LENGTH
        || stored.length < headerLength + NONCE_BYTES + TAG_BITS / 8) {
      throw new UnreadableRecordException(
          id, UnreadableRecordException.Reason.MALFORMED, null, null);
    }
    String keyId = new String(stored, 2, idLength, StandardCharsets.US_ASCII);
    SecretKey key = keyring.key(keyId);
    if (key == null) {
      throw new UnreadableRecordException(
          id, UnreadableRecordException.Reason.KEY_MISSING, keyId, null);
    }
    try {
      Cipher cipher = CIPHERS.get();
      cipher.init(
          Cipher.DECRYPT_MODE,
          key,
          new GCMParameterSpec(TAG_BITS, stored, headerLength, NONCE_BYTES));
      cipher.updateAAD(associatedData(java.util.Arrays.copyOf(stored, headerLength), kind, id));
      int offset = headerLength + NONCE_BYTES;
      return cipher.doFinal(stored, offset, stored.length - offset);
    } catch (AEADBadTagException e) {
      throw new UnreadableRecordException(
          id, UnreadableRecordException.Reason.AUTHENTICATION_FAILED, keyId, e);
    } catch (GeneralSecurityException e) {
      throw new UnreadableRecordException(id, UnreadableRecordException.Reason.MALFORMED, keyId, e);
    }
  }

  private static byte[] header(String keyId) {
    byte[] id = keyId.getBytes(StandardCharsets.US_ASCII);
    byte[] header = new byte[2 + id.length];
    header[0] = FORMAT;
    header[1] = (byte) id.length;
    System.arraycopy(id, 0, header, 2, id.length);
    return header;
  }

  /**
   * The header, the payload's kind, then the scope (length-prefixed) and key: what a payload
   * belongs to.
   */
  private static byte[] associatedData(byte[] header, byte kind, RecordId id) {
    byte[] scope = id.scope().value().getBytes(StandardCharsets.UTF_8);
    byte[] key = id.key().value().getBytes(StandardCharsets.US_ASCII);
    return ByteBuffer.allocate(header.length + 1 + 4 + scope.length + key.length)
        .put(header)
        .put(kind)
        .putInt(scope.length)
        .put(scope)
        .put(key)
        .array();
  }

  @Override
  public String toString() {
    return "EncryptingStore[" + store + ", " + keyring + "]";
  }

  /** Builds an {@link EncryptingStore}. */
  public static final class Builder {
    private final IdempotencyStore store;
    private final Keyring keyring;
    private boolean readPlaintext;

    private Builder(IdempotencyStore store, Keyring keyring) {
      this.store = Objects.requireNonNull(store, "store");
      this.keyring = Objects.requireNonNull(keyring, "keyring");
    }

    /**
     * Whether payloads that are not encrypted (written before encryption was turned on) are read as
     * they are, for the migration of a live store; default {@code false}: they are {@link
     * UnreadableRecordException.Reason#MALFORMED}. Turn it off again once the longest TTL has
     * passed, so that nobody with write access to the store can plant a plaintext response.
     */
    public Builder readPlaintext(boolean readPlaintext) {
      this.readPlaintext = readPlaintext;
      return this;
    }

    public EncryptingStore build() {
      return new EncryptingStore(this);
    }
  }
}
