package dev.once.fingerprint;

import dev.once.Fingerprint;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;

/**
 * Computes request {@link Fingerprint}s: SHA-256 over the request's context parts (method, route,
 * and whatever else the caller says makes two requests the same), the media type of its body, and
 * the body.
 *
 * <p>{@link #json} hashes the canonical form of a JSON body (see {@link
 * JsonCanonicalizer#canonicalizeExact}: RFC 8785, with numbers kept exact), so key order,
 * whitespace and number spelling do not change the fingerprint, while two different numbers always
 * do; the values at the configured JSON pointers (timestamps, trace ids) are left out. A body that
 * is not I-JSON is hashed raw instead: {@code json} never rejects a body. {@link #raw} always
 * hashes the bytes as they are. {@link #content} chooses between the two by the body's {@code
 * Content-Type} and hashes that type's essence too, as HTTP needs.
 *
 * <p>The digest input is, in order: the version byte {@value #VERSION}; the number of context parts
 * (4 bytes, big-endian); each part's UTF-8 length (4 bytes) and bytes; the media type essence,
 * written like a part, or the length {@code 0xFFFFFFFF} alone when there is none; the tag {@code
 * 'J'} for a canonical JSON body or {@code 'R'} for a raw one; for {@code 'J'} only, the SHA-256 of
 * the sorted excluded pointers (their count, then each one's length and UTF-8 bytes), because
 * exclusions change what the fingerprint means; then the body. Length prefixes make the parts
 * unambiguous ({@code "ab","c"} differs from {@code "a","bc"}); the tag keeps a raw body from ever
 * matching a canonical one. A context part with a lone surrogate, which UTF-8 cannot carry, is
 * encoded in the generalised three-byte form, so that distinct strings never share bytes.
 *
 * <p>Every fingerprint also carries the same request's version-1 fingerprint as {@link
 * Fingerprint#previous()}, so records written before version 2 still match their retries ({@link
 * Fingerprint#matches}). Version 1 hashed no media type and wrote numbers as the nearest double
 * (RFC 8785); it costs one more SHA-256 of the body, and one more parse for a body whose numbers
 * the two versions write differently.
 *
 * <p>Immutable and thread-safe; each thread reuses its own digest and buffers.
 */
public final class Fingerprinter {

  /** The version of the algorithm described above; stored in every {@link Fingerprint}. */
  public static final int VERSION = 2;

  /** RFC 8785 numbers and no media type; see docs/fingerprints.md. */
  private static final int VERSION_1 = 1;

  private static final byte JSON_TAG = 'J';
  private static final byte RAW_TAG = 'R';
  private static final byte[] NO_BODY = new byte[0];
  private static final String[] NO_PARTS = new String[0];

  /**
   * A body fingerprinted by {@link #json} or {@link #raw} has no media type, as opposed to any
   * given one.
   */
  private static final @Nullable String NO_MEDIA_TYPE = null;

  /** Lower-case hex digits, by nibble. */
  private static final byte[] HEX_DIGITS = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);

  private static final Fingerprinter DEFAULTS = new Fingerprinter(List.of());

  private final List<String> exclusions;
  private final @Nullable ExclusionTree exclusionTree;
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
   * Fingerprints a JSON body, with no media type: its canonical form without the excluded values if
   * it is I-JSON, its raw bytes otherwise. Never throws for any body; a null body counts as empty.
   *
   * @param context the parts that, with the body, identify the request (for example method and
   *     route); none may be null
   * @throws IllegalArgumentException if a context part is null
   */
  public Fingerprint json(byte[] body, String... context) {
    String[] parts = partsOf(context);
    return fingerprint(NO_MEDIA_TYPE, true, bodyOf(body), parts, parts);
  }

  /**
   * Fingerprints a body as raw bytes, with no media type, for content that is not JSON; a null body
   * counts as empty.
   *
   * @throws IllegalArgumentException if a context part is null
   */
  public Fingerprint raw(byte[] body, String... context) {
    String[] parts = partsOf(context);
    return fingerprint(NO_MEDIA_TYPE, false, bodyOf(body), parts, parts);
  }

  /**
   * Fingerprints a body by its {@code Content-Type}: as {@link #json} does for {@code
   * application/json} and every {@code +json} type, as {@link #raw} does for any other, and with
   * the type's essence — {@code type/subtype} lowercased, without parameters (RFC 9110 §8.3.1) —
   * hashed too. So {@code application/merge-patch+json} and {@code application/json-patch+json}
   * never match, while {@code text/plain} and {@code Text/Plain; charset=utf-8} do. An absent type
   * (null) is a value of its own, unlike any given one, the empty one included. Never throws for
   * any body or type.
   *
   * <p>Its {@linkplain Fingerprint#previous() version-1 fingerprint} is the one once-http computed
   * before version 2: {@code json(body, context)} for a JSON type, else {@code raw(body, context…,
   * contentType)} with the header as sent ({@code ""} when absent).
   *
   * @param contentType the {@code Content-Type} header as received, or null if there was none
   * @throws IllegalArgumentException if a context part is null
   */
  public Fingerprint content(@Nullable String contentType, byte[] body, String... context) {
    String[] parts = partsOf(context);
    String essence = contentType == null ? NO_MEDIA_TYPE : essence(contentType);
    boolean json =
        essence != null && (essence.equals("application/json") || essence.endsWith("+json"));
    String[] version1Parts = parts;
    if (!json) {
      version1Parts = Arrays.copyOf(parts, parts.length + 1);
      version1Parts[parts.length] = contentType == null ? "" : contentType;
    }
    return fingerprint(essence, json, bodyOf(body), parts, version1Parts);
  }

  /** The media type without parameters, trimmed and lowercased, whether well-formed or not. */
  private static String essence(String contentType) {
    int semicolon = contentType.indexOf(';');
    return (semicolon < 0 ? contentType : contentType.substring(0, semicolon))
        .trim()
        .toLowerCase(Locale.ROOT);
  }

  private Fingerprint fingerprint(
      @Nullable String mediaType,
      boolean json,
      byte[] body,
      String[] parts,
      String[] version1Parts) {
    Workspace workspace = Workspace.current();
    try {
      if (!json) {
        return new Fingerprint(
            VERSION,
            hash(workspace, VERSION, parts, mediaType, null, body),
            new Fingerprint(
                VERSION_1, hash(workspace, VERSION_1, version1Parts, NO_MEDIA_TYPE, null, body)));
      }
      ByteSink canonical = canonical(workspace, body, true);
      String hex = hash(workspace, VERSION, parts, mediaType, canonical, body);
      // When every number was written as RFC 8785 writes it, version 1 hashed these very bytes.
      ByteSink version1 =
          canonical != null && !workspace.parser.numbersBeyondJcs()
              ? canonical
              : canonical(workspace, body, false);
      return new Fingerprint(
          VERSION,
          hex,
          new Fingerprint(
              VERSION_1, hash(workspace, VERSION_1, version1Parts, NO_MEDIA_TYPE, version1, body)));
    } finally {
      workspace.release();
    }
  }

  /**
   * The body's canonical form, numbers exact or as RFC 8785 writes them; null if it is not I-JSON.
   */
  private @Nullable ByteSink canonical(Workspace workspace, byte[] body, boolean exactNumbers) {
    try {
      workspace.parser.canonicalize(body, exclusionTree, exactNumbers);
      return workspace.parser.result();
    } catch (InvalidJsonException notJson) {
      return null;
    }
  }

  /**
   * Hashes the layout of {@code version} (described above; version 1 has no media type) over the
   * canonical form if there is one, else over the raw body.
   */
  private String hash(
      Workspace workspace,
      int version,
      String[] parts,
      @Nullable String mediaType,
      @Nullable ByteSink canonical,
      byte[] body) {
    ByteSink header = workspace.header;
    header.reset(64);
    header.write((byte) version);
    DigestInput.writeParts(parts, header);
    if (version != VERSION_1) {
      DigestInput.writeOptional(mediaType, header);
    }
    header.ensure(header.len + 1 + exclusionsDigest.length);
    MessageDigest sha256 = workspace.sha256;
    if (canonical == null) {
      header.write(RAW_TAG);
      sha256.update(header.buf, 0, header.len);
      sha256.update(body);
    } else {
      header.write(JSON_TAG);
      header.write(exclusionsDigest, 0, exclusionsDigest.length);
      sha256.update(header.buf, 0, header.len);
      sha256.update(canonical.buf, 0, canonical.len);
    }
    return hex(sha256.digest());
  }

  /**
   * Lower-case hex of a digest. Not {@code HexFormat}: on JDK 17 it builds the string a character
   * at a time through a {@code StringBuilder}, and a JFR profile of a 1 KiB fingerprint put 13 % of
   * the whole fingerprint's time in it; this is one array and one Latin-1 string copy.
   */
  static String hex(byte[] bytes) {
    byte[] digits = new byte[bytes.length * 2];
    for (int i = 0; i < bytes.length; i++) {
      digits[2 * i] = HEX_DIGITS[(bytes[i] >> 4) & 0xF];
      digits[2 * i + 1] = HEX_DIGITS[bytes[i] & 0xF];
    }
    return new String(digits, StandardCharsets.ISO_8859_1);
  }

  private static String[] partsOf(String[] context) {
    return context == null ? NO_PARTS : context;
  }

  private static byte[] bodyOf(byte[] body) {
    return body == null ? NO_BODY : body;
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
     * that change between retries of the same request, such as {@code /meta/timestamp} or {@code
     * /items/0/traceId}. A pointer to a place a body does not have is ignored for that body.
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
