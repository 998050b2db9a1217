package dev.once.fingerprint;

/**
 * Thrown by {@link JsonCanonicalizer} when its input is not I-JSON (RFC 7493) that RFC 8785 can
 * canonicalise: malformed JSON, invalid UTF-8, lone surrogates, duplicate member names, numbers
 * outside the range of a double, nesting deeper than {@link JsonCanonicalizer#MAX_DEPTH}, and so
 * on.
 *
 * <p>{@link Fingerprinter#json(byte[], String...)} never lets it escape: it hashes such bodies raw.
 */
public final class InvalidJsonException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final int offset;

  InvalidJsonException(String reason, int offset) {
    super("invalid JSON at byte offset " + offset + ": " + reason);
    this.offset = offset;
  }

  /** Returns the offset, in bytes from the start of the input, where the problem was found. */
  public int offset() {
    return offset;
  }
}
