package dev.once;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The digest of a canonical request, tagged with the version of the algorithm that produced it, so
 * that the algorithm can evolve without old records matching new requests by accident.
 *
 * <p>Produce one with {@link dev.once.fingerprint.Fingerprinter}; stores keep it as the single
 * string {@link #encoded()} and read it back with {@link #parse(String)}.
 *
 * <p><b>Comparing a request with a record: {@link #matches(Fingerprint)}</b>, not {@code equals}. A
 * fingerprint from a {@code Fingerprinter} also carries the same request's fingerprint under the
 * previous algorithm version ({@link #previous()}), so a record written before an upgrade still
 * matches its retries, and still only those: each record is compared under the version that wrote
 * it. {@code previous} is derived data, not part of the value: {@code equals}, {@code hashCode} and
 * {@link #encoded()} are those of (version, hex) alone, so a fingerprint read back from a store
 * equals the one that was written.
 *
 * @param version the fingerprint algorithm version, 1 to 255
 * @param hex the digest in lowercase hex, 16 to 128 characters
 * @param previous the same request's fingerprint under an older version, or null if unknown (as for
 *     a fingerprint read from a store); its version must be lower than {@code version}
 */
public record Fingerprint(int version, String hex, @Nullable Fingerprint previous) {

  public Fingerprint {
    if (version < 1 || version > 255) {
      throw new IllegalArgumentException("fingerprint version must be 1-255, was " + version);
    }
    if (hex == null || hex.length() < 16 || hex.length() > 128 || (hex.length() & 1) != 0) {
      throw new IllegalArgumentException(
          "fingerprint must be 16-128 lowercase hex digits, even in number");
    }
    for (int i = 0; i < hex.length(); i++) {
      char c = hex.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        throw new IllegalArgumentException(
            "fingerprint must be lowercase hex; found '" + c + "' at " + i);
      }
    }
    if (previous != null && previous.version >= version) {
      throw new IllegalArgumentException(
          "a previous fingerprint must have an older version than "
              + version
              + ", was "
              + previous.version);
    }
  }

  /** A fingerprint without a previous version: one read from a store, or made by hand. */
  public Fingerprint(int version, String hex) {
    this(version, hex, null);
  }

  /**
   * Whether a request with this fingerprint is the request that wrote {@code recorded}: whether
   * this fingerprint, or one of its previous versions, has {@code recorded}'s version and digest. A
   * record of a version this fingerprint does not carry (a newer one, or one older than its
   * previous versions) matches nothing, so it is answered as a different request, never replayed by
   * mistake.
   *
   * <p>A record of an older version is only as discriminating as that version: requests it could
   * not tell apart still match it (see docs/fingerprints.md, "Versions").
   */
  public boolean matches(Fingerprint recorded) {
    Objects.requireNonNull(recorded, "recorded");
    // Bounded: each previous version is strictly older, and versions start at 1.
    for (Fingerprint mine = this; mine != null; mine = mine.previous) {
      if (mine.version == recorded.version) {
        return mine.hex.equals(recorded.hex);
      }
    }
    return false;
  }

  /** Returns the form stores keep: {@code <version>:<hex>}. */
  public String encoded() {
    return version + ":" + hex;
  }

  /** Parses the form {@link #encoded()} returns. */
  public static Fingerprint parse(String encoded) {
    if (encoded == null) {
      throw new IllegalArgumentException("encoded fingerprint must not be null");
    }
    int colon = encoded.indexOf(':');
    if (colon <= 0 || colon > 3) {
      throw new IllegalArgumentException("encoded fingerprint must look like '<version>:<hex>'");
    }
    int version;
    try {
      version = Integer.parseInt(encoded, 0, colon, 10);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("encoded fingerprint has a bad version", e);
    }
    return new Fingerprint(version, encoded.substring(colon + 1));
  }

  /** Equal when version and digest are: {@link #previous()} is derived from the same request. */
  @Override
  public boolean equals(Object o) {
    return o instanceof Fingerprint other && version == other.version && hex.equals(other.hex);
  }

  @Override
  public int hashCode() {
    return 31 * version + hex.hashCode();
  }

  @Override
  public String toString() {
    return encoded();
  }
}
