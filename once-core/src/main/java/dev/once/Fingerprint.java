package dev.once;

/**
 * The digest of a canonical request, tagged with the version of the algorithm that produced it, so
 * that the algorithm can evolve without old records matching new requests by accident.
 *
 * <p>Produce one with {@link dev.once.fingerprint.Fingerprinter}; stores keep it as the single string
 * {@link #encoded()} and read it back with {@link #parse(String)}.
 *
 * @param version the fingerprint algorithm version, 1 to 255
 * @param hex the digest in lowercase hex, 16 to 128 characters
 */
public record Fingerprint(int version, String hex) {

  public Fingerprint {
    if (version < 1 || version > 255) {
      throw new IllegalArgumentException("fingerprint version must be 1-255, was " + version);
    }
    if (hex == null || hex.length() < 16 || hex.length() > 128 || (hex.length() & 1) != 0) {
      throw new IllegalArgumentException("fingerprint must be 16-128 lowercase hex digits, even in number");
    }
    for (int i = 0; i < hex.length(); i++) {
      char c = hex.charAt(i);
      if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
        throw new IllegalArgumentException("fingerprint must be lowercase hex; found '" + c + "' at " + i);
      }
    }
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

  @Override
  public String toString() {
    return encoded();
  }
}
