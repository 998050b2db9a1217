package dev.once.store;

import java.util.Base64;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import javax.crypto.SecretKey;
import javax.crypto.spec.SecretKeySpec;
import org.jspecify.annotations.Nullable;

/**
 * The AES keys of an {@link EncryptingStore}: one <em>active</em> key that every new payload is
 * encrypted with, and older keys that payloads written before a rotation are still decrypted with.
 * Each key has an id, stored in clear in every payload, so a reader knows which key to use.
 *
 * <pre>{@code
 * Keyring keys = Keyring.builder()
 *     .active("2026-03", newKeyBytes)        // writes and reads
 *     .retired("2025-12", oldKeyBytes)       // reads only, until the old records have expired
 *     .build();
 * }</pre>
 *
 * <p>To rotate: add the new key as active and keep the old one as retired; once every record
 * written with the old key has expired (the longest TTL), drop it. Keys are 128, 192 or 256 bits.
 * Immutable; {@link #toString()} names the key ids, never the keys.
 */
public final class Keyring {

  /** The longest key id; ids are 1 to 64 characters of {@code A-Z a-z 0-9 . _ -}. */
  public static final int MAX_ID_LENGTH = 64;

  private final String activeId;
  private final SecretKey active;
  private final Map<String, SecretKey> keys;

  private Keyring(Builder b) {
    this.activeId = Objects.requireNonNull(b.activeId, "activeId"); // build() checked it
    this.active = Objects.requireNonNull(b.keys.get(activeId), "active key"); // active() added it
    this.keys = Collections.unmodifiableMap(new LinkedHashMap<>(b.keys));
  }

  public static Builder builder() {
    return new Builder();
  }

  /**
   * Parses the form configuration files and environment variables carry: {@code
   * id:base64key[,id:base64key...]}, the first key active and the others retired.
   *
   * @throws IllegalArgumentException naming the entry (never its key) if the text is malformed
   */
  public static Keyring parse(@Nullable String spec) {
    if (spec == null || spec.isBlank()) {
      throw new IllegalArgumentException(
          "keyring: no keys given; expected id:base64key[,id:base64key...]");
    }
    Builder b = builder();
    String[] entries = spec.split(",", -1);
    for (int i = 0; i < entries.length; i++) {
      String entry = entries[i].trim();
      int colon = entry.indexOf(':');
      if (colon <= 0) {
        throw new IllegalArgumentException("keyring: entry " + (i + 1) + " is not id:base64key");
      }
      String id = entry.substring(0, colon);
      byte[] key;
      try {
        key = Base64.getDecoder().decode(entry.substring(colon + 1).trim());
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "keyring: the key of '" + safeId(id) + "' is not base64");
      }
      if (i == 0) {
        b.active(id, key);
      } else {
        b.retired(id, key);
      }
    }
    return b.build();
  }

  /** The id new payloads are written with. */
  public String activeId() {
    return activeId;
  }

  /** Every key id this keyring can decrypt with, the active one first. */
  public List<String> ids() {
    List<String> ids = new java.util.ArrayList<>(keys.size());
    ids.add(activeId);
    keys.keySet().stream().filter(id -> !id.equals(activeId)).forEach(ids::add);
    return List.copyOf(ids);
  }

  SecretKey activeKey() {
    return active;
  }

  /** The key with this id, or {@code null}. */
  @Nullable SecretKey key(String id) {
    return keys.get(id);
  }

  @Override
  public String toString() {
    return "Keyring[active=" + activeId + ", ids=" + keys.keySet() + "]";
  }

  private static String safeId(String id) {
    return validId(id) ? id : "<malformed id>";
  }

  private static boolean validId(@Nullable String id) {
    if (id == null || id.isEmpty() || id.length() > MAX_ID_LENGTH) {
      return false;
    }
    for (int i = 0; i < id.length(); i++) {
      char c = id.charAt(i);
      if (!((c >= 'a' && c <= 'z')
          || (c >= 'A' && c <= 'Z')
          || (c >= '0' && c <= '9')
          || c == '.'
          || c == '_'
          || c == '-')) {
        return false;
      }
    }
    return true;
  }

  /** Builds a {@link Keyring}; each key is checked as it is added. */
  public static final class Builder {
    private final Map<String, SecretKey> keys = new LinkedHashMap<>();
    private @Nullable String activeId;

    private Builder() {}

    /** The key new payloads are encrypted with; exactly one is required. */
    public Builder active(String id, byte[] key) {
      if (activeId != null) {
        throw new IllegalArgumentException(
            "active: a key is already active ('" + activeId + "'); add others as retired");
      }
      add(id, key);
      activeId = id;
      return this;
    }

    /** A key that only decrypts payloads written before it was rotated out. */
    public Builder retired(String id, byte[] key) {
      add(id, key);
      return this;
    }

    private void add(@Nullable String id, byte[] key) {
      if (!validId(id)) {
        throw new IllegalArgumentException(
            "key id must be 1-"
                + MAX_ID_LENGTH
                + " characters of A-Z a-z 0-9 . _ -, was '"
                + (id == null ? null : id.replaceAll("[^ -~]", "?"))
                + "'");
      }
      Objects.requireNonNull(key, "key");
      if (key.length != 16 && key.length != 24 && key.length != 32) {
        throw new IllegalArgumentException(
            "key '"
                + id
                + "' must be 16, 24 or 32 bytes (AES-128/192/256), was "
                + key.length
                + " bytes");
      }
      if (keys.containsKey(id)) {
        throw new IllegalArgumentException("key id '" + id + "' is given twice");
      }
      keys.put(id, new SecretKeySpec(key.clone(), "AES"));
    }

    public Keyring build() {
      if (activeId == null) {
        throw new IllegalStateException("a keyring needs an active key");
      }
      return new Keyring(this);
    }
  }
}
