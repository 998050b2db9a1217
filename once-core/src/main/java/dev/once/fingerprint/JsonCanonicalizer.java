package dev.once.fingerprint;

import dev.once.internal.Arguments;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * Canonicalises JSON per RFC 8785 (JSON Canonicalization Scheme): the same data, however it was
 * spelled, gives the same bytes.
 *
 * <ul>
 *   <li>no whitespace; object members sorted by the UTF-16 code units of their names;
 *   <li>numbers as ECMAScript prints the nearest double ({@code 1.0}, {@code 1e0} → {@code 1};
 *       {@code 1E30} → {@code 1e+30}; {@code -0} → {@code 0});
 *   <li>strings with only {@code \" \\ \b \f \n \r \t} and {@code \}{@code u00xx} (other control
 *       characters) escaped, everything else as literal UTF-8.
 * </ul>
 *
 * <p>The input must be UTF-8 I-JSON (RFC 7493); anything else throws {@link InvalidJsonException}
 * naming the byte offset: malformed JSON, invalid UTF-8, a leading byte order mark, lone surrogates
 * (raw or escaped), unescaped control characters, duplicate member names, numbers that overflow a
 * double ({@code 1e400}), and nesting deeper than {@link #MAX_DEPTH}. Numbers that underflow read
 * as zero, as in every JSON parser. Any JSON value may be the top-level one.
 *
 * <p>{@link #canonicalizeExact} gives the form fingerprints hash instead, which differs in one
 * respect: numbers keep their exact value rather than becoming the nearest double.
 *
 * <p>Thread-safe: each thread reuses its own buffers, and nothing is allocated per member.
 */
public final class JsonCanonicalizer {

  /**
   * The deepest nesting of arrays and objects accepted; deeper input is rejected, never recursed
   * into.
   */
  public static final int MAX_DEPTH = 512;

  private JsonCanonicalizer() {}

  /**
   * Returns the RFC 8785 canonical form of UTF-8 JSON.
   *
   * @throws InvalidJsonException if {@code json} is not I-JSON
   */
  public static byte[] canonicalize(byte[] json) {
    return canonicalize(json, null);
  }

  /**
   * Returns the RFC 8785 canonical form of UTF-8 JSON after removing the values the RFC 6901
   * pointers point at: a member is removed with its name, an array element is removed and the
   * elements after it move up. All pointers refer to the input as given, not to the result of
   * earlier removals. A pointer to a place the input does not have is ignored; the pointer {@code
   * ""} removes everything and gives an empty result (the input is still validated).
   *
   * @param excludedPointers pointers such as {@code /meta/timestamp} or {@code /items/0/ts}
   * @throws IllegalArgumentException if a pointer is malformed
   * @throws InvalidJsonException if {@code json} is not I-JSON
   */
  public static byte[] canonicalize(byte[] json, @Nullable Set<String> excludedPointers) {
    ExclusionTree excluded =
        excludedPointers == null ? null : ExclusionTree.of(parseAll(excludedPointers));
    return run(json, excluded, false);
  }

  /**
   * Returns the canonical form {@link Fingerprinter#json} hashes (before exclusions): RFC 8785,
   * except that a number the nearest double would not represent exactly in RFC 8785's output keeps
   * its exact value. Its significant digits, without leading and trailing zeros, are laid out as
   * ECMAScript lays out a double's ({@code 12345678901234567891}, {@code 0.10000000000000000001},
   * {@code 1.5e-400}), so {@code 1}, {@code 1.0} and {@code 10e-1} still agree, while two different
   * numbers never do. Where the nearest double loses nothing (every number of at most 15
   * significant digits that a double can hold) both forms are the same bytes.
   *
   * @throws InvalidJsonException if {@code json} is not I-JSON, or holds a nonzero number with an
   *     exponent beyond ±999,999,999
   */
  public static byte[] canonicalizeExact(byte[] json) {
    return run(json, null, true);
  }

  private static byte[] run(byte[] json, @Nullable ExclusionTree excluded, boolean exactNumbers) {
    Arguments.present("json", json);
    Workspace workspace = Workspace.current();
    try {
      workspace.parser.canonicalize(json, excluded, exactNumbers);
      return workspace.parser.result().toByteArray();
    } finally {
      workspace.release();
    }
  }

  private static List<JsonPointer> parseAll(Set<String> pointers) {
    List<JsonPointer> parsed = new ArrayList<>(pointers.size());
    for (String pointer : pointers) {
      parsed.add(JsonPointer.parse(pointer));
    }
    return parsed;
  }
}
