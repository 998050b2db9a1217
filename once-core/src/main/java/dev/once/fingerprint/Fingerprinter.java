package dev.once.fingerprint;

import dev.once.Fingerprint;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.TreeMap;

/**
 * Computes request {@link Fingerprint}s: SHA-256 over the request's context parts (method, route,
 * and whatever else the caller says makes two requests the same) and its body.
 *
 * <p>{@link #json} hashes the RFC 8785 canonical form of a JSON body (see
 * {@link JsonCanonicalizer}), so key order, whitespace and number spelling do not change the
 * fingerprint, and the values at the configured JSON pointers (timestamps, trace ids) are left out.
 * A body that is not I-JSON is hashed raw instead: {@code json} never rejects a body. {@link #raw}
 * always hashes the bytes as they are.
 *
 * <p>The digest input is, in order: the version byte {@value #VERSION}; the number of context parts
 * (4 bytes, big-endian); each part's UTF-8 length (4 bytes) and bytes; the tag {@code 'J'} for a
 * canonical JSON body or {@code 'R'} for a raw one; for {@code 'J'} only, the SHA-256 of the sorted
 * excluded pointers (their count, then each one's length and UTF-8 bytes), because exclusions change
 * what the fingerprint means; then the body. Length prefixes make the parts unambiguous
 * ({@code "ab","c"} differs from {@code "a","bc"}); the tag keeps a raw body from ever matching a
 * canonical one. A context part with a lone surrogate, which UTF-8 cannot carry, is encoded in the
 * generalised three-byte form, so that distinct strings never share bytes.
 *
 * <p>Immutable and thread-safe; each thread reuses its own digest and buffers.
 */
public final class Fingerprinter {

  /** The version of the algorithm described above; stored in every {@link Fingerprint}. */
  public static final int VERSION = 1;

  private static final byte JSON_TAG = 'J';
  private static final byte RAW_TAG = 'R';
  private static final byte[] NO_BODY = new byte[0];
  private static final HexFormat HEX = HexFormat.of();
  private static final Fingerprinter DEFAULTS = new Fingerprinter(List.of());

  private final List<String> exclusions;
  private final ExclusionTree exclusionTree;
  private final byte[] exclusionsDigest;

  private Fingerprinter(List<JsonPointer> pointers) {
    TreeMap<String, JsonPointer> sorted = new TreeMap<>();
    pointers.forEach(p -> sorted.put(p.text(), p));
    this.exclusions = List.copyOf(sorted.keySet());
    this.exclusionTree = ExclusionTree.of(sorted.values());
    this.exclusionsDigest = digestOf(exclusions);
  }

  /** Returns the fingerprinter without exclusions. */
  public static Fingerprinter defaults() {
    return DEFAULTS;
  }

  /** Returns a builder for a fingerprinter with exclusions. */
  public static Builder builder() {
    return new Builder();
  }

  /** Returns the excluded JSON pointers, sorted and without repeats. */
  public List<String> exclusions() {
    return exclusions;
  }

  /**
   * Fingerprints a JSON body: its canonical form without the excluded values if it is I-JSON, its
   * raw bytes otherwise. Never throws for any body; a null body counts as empty.
   *
   * @param context the parts that, with the body, identify the request (for example method and
   *     route); none may be null
   * @throws IllegalArgumentException if a context part is null
   */
  public Fingerprint json(byte[] body, String... context) {
    byte[] bytes = body == null ? NO_BODY : body;
    Workspace workspace = Workspace.current();
    try {
      workspace.parser.canonicalize(bytes, exclusionTree);
    } catch (InvalidJsonException notJson) {
      workspace.release();
      return raw(bytes, context);
    }
    try {
      ByteSink canonical = workspace.parser.result();
      return hash(workspace, context, JSON_TAG, canonical.buf, canonical.len);
    } finally {
      workspace.release();
    }
  }

  /**
   * Fingerprints a body as raw bytes, for content that is not JSON; a null body counts as empty.
   *
   * @throws IllegalArgumentException if a context part is null
   */
  public Fingerprint raw(byte[] body, String... context) {
    byte[] bytes = body == null ? NO_BODY : body;
    return hash(Workspace.current(), context, RAW_TAG, bytes, bytes.length);
  }

  private Fingerprint hash(Workspace workspace, String[] context, byte tag, byte[] body, int length) {
    ByteSink header = workspace.header;
    header.reset(0);
    header.ensure(64);
    header.write((byte) VERSION);
    DigestInput.writeParts(context == null ? new String[0] : context, header);
    header.write(tag);
    if (tag == JSON_TAG) {
      header.write(exclusionsDigest, 0, exclusionsDigest.length);
    }
    MessageDigest sha256 = workspace.sha256;
    sha256.update(header.buf, 0, header.len);
    sha256.update(body, 0, length);
    return new Fingerprint(VERSION, HEX.formatHex(sha256.digest()));
  }

  private static byte[] digestOf(List<String> sortedPointers) {
    ByteSink input = new ByteSink(64);
    DigestInput.writeParts(sortedPointers.toArray(new String[0]), input);
    MessageDigest sha256 = Workspace.newSha256();
    sha256.update(input.buf, 0, input.len);
    return sha256.digest();
  }

  @Override
  public String toString() {
    return "Fingerprinter[version=" + VERSION + ", exclusions=" + exclusions + "]";
  }

  /** Collects the JSON pointers to leave out of JSON fingerprints. */
  public static final class Builder {

    private final List<JsonPointer> exclusions = new ArrayList<>();

    private Builder() {}

    /**
     * Leaves the value at an RFC 6901 JSON pointer out of JSON fingerprints, for parts of a body
     * that change between retries of the same request, such as {@code /meta/timestamp} or
     * {@code /items/0/traceId}. A pointer to a place a body does not have is ignored for that body.
     *
     * @throws IllegalArgumentException naming the pointer if it is not {@code ""} or does not start
     *     with {@code /}, has a {@code ~} not followed by {@code 0} or {@code 1}, or is null
     */
    public Builder exclude(String jsonPointer) {
      exclusions.add(JsonPointer.parse(jsonPointer));
      return this;
    }

    /** Returns the fingerprinter; the builder can go on being used for others. */
    public Fingerprinter build() {
      return exclusions.isEmpty() ? DEFAULTS : new Fingerprinter(exclusions);
    }
  }
}
