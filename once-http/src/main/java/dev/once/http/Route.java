package dev.once.http;

import dev.once.ExecutionPolicy;
import dev.once.IdempotencyKey;
import dev.once.InFlightPolicy;
import dev.once.InvalidIdempotencyKeyException;
import dev.once.fingerprint.Fingerprinter;
import java.util.List;
import java.util.Objects;

/**
 * A path pattern with its policy. Patterns are matched segment by segment: a literal matches
 * itself, {@code *} or {@code {name}} matches one segment, and a final {@code **} matches the rest
 * (including nothing). The pattern, not the concrete path, goes into the scope, so that one key
 * cannot be used for two different operations on the same route.
 */
public final class Route {

  private final String pattern;
  private final String[] segments;
  private final RoutePolicy policy;
  private final Fingerprinter fingerprinter;
  private final ExecutionPolicy leasing;
  private final ExecutionPolicy rejecting;
  private final boolean guarded;

  /**
   * Room for the encoded status and headers beside the body in a recorded response. The route's
   * {@code maxResultBytes} caps the body ({@link Exchange#record} checks it); the engine caps what
   * it stores, so its cap is the body's plus this, and a body just under the cap is never refused
   * because of its headers. Larger than any header section a server sends (Jetty allows 8 KiB by
   * default, the gateway at most 64 KiB).
   */
  static final int HEADER_ALLOWANCE = 128 << 10;

  Route(String pattern, RoutePolicy policy) {
    this(pattern, policy, true);
  }

  /**
   * @param guarded false for the paths no route names when coverage is {@link Coverage#ROUTES}:
   *     nothing on them is guarded, whatever the method
   */
  Route(String pattern, RoutePolicy policy, boolean guarded) {
    this.guarded = guarded;
    this.pattern = validate(pattern);
    this.segments = split(pattern);
    this.policy = Objects.requireNonNull(policy, "policy");
    Fingerprinter.Builder fb = Fingerprinter.builder();
    policy.excludedJsonPointers().forEach(fb::exclude);
    this.fingerprinter = fb.build();
    ExecutionPolicy execution = policy.execution();
    this.leasing =
        execution.toBuilder()
            .maxResultBytes(
                (int)
                    Math.min(
                        Integer.MAX_VALUE, (long) execution.maxResultBytes() + HEADER_ALLOWANCE))
            .build();
    this.rejecting =
        execution.inFlight() instanceof InFlightPolicy.Wait
            ? leasing.toBuilder().inFlight(InFlightPolicy.reject()).build()
            : leasing;
  }

  private static String validate(String pattern) {
    if (pattern == null || !pattern.startsWith("/")) {
      throw new IllegalArgumentException(
          "route pattern must start with '/', was '" + pattern + "'");
    }
    String[] parts = split(pattern);
    for (int i = 0; i < parts.length; i++) {
      if (parts[i].equals("**") && i != parts.length - 1) {
        throw new IllegalArgumentException(
            "route pattern '" + pattern + "': '**' may only be the last segment");
      }
    }
    return pattern;
  }

  /**
   * The segments of a path: without its leading and one trailing {@code /}. A path that does not
   * start with {@code /} (empty, or {@code *}) keeps its first character: found by fuzzing, an
   * empty path used to throw, and {@code xrequired/a} used to match {@code /required/**}.
   */
  private static String[] split(String path) {
    int start = path.startsWith("/") ? 1 : 0;
    int end = path.length() > start && path.endsWith("/") ? path.length() - 1 : path.length();
    return start >= end ? new String[0] : path.substring(start, end).split("/", -1);
  }

  boolean matches(String path) {
    String[] p = split(path);
    int i = 0;
    for (; i < segments.length; i++) {
      String s = segments[i];
      if (s.equals("**")) {
        return true;
      }
      if (i >= p.length) {
        return false;
      }
      boolean wildcard = s.equals("*") || (s.startsWith("{") && s.endsWith("}"));
      if (!wildcard && !s.equals(p[i])) {
        return false;
      }
    }
    return i == p.length;
  }

  /** The pattern as configured. */
  public String pattern() {
    return pattern;
  }

  /**
   * Whether a request with this method is guarded on this route: the policy covers the method, and
   * the route is not the unguarded rest of a deployment whose {@link Coverage} is {@link
   * Coverage#ROUTES}. Adapters ask this before anything else; a request it refuses passes through
   * untouched.
   */
  public boolean covers(String method) {
    return guarded && policy.covers(method);
  }

  /** The policy for requests on this route. */
  public RoutePolicy policy() {
    return policy;
  }

  Fingerprinter fingerprinter() {
    return fingerprinter;
  }

  /**
   * The execution policy a lease on this route is granted under: the route's, with room for
   * headers.
   */
  ExecutionPolicy leasing() {
    return leasing;
  }

  /** The execution policy for a duplicate that may not wait because enough already do. */
  ExecutionPolicy rejecting() {
    return rejecting;
  }

  @Override
  public String toString() {
    return "Route[" + pattern + "]";
  }

  /**
   * Whether {@link HttpIdempotency#begin} answers a request with these values of the route's key
   * header whatever its body says: no key, more than one, or one that does not parse. An adapter
   * need not read (nor ask for, with {@code Expect: 100-continue}) the body before deciding such a
   * request; it still lets {@code begin} give the answer.
   */
  public boolean decidedWithoutTheBody(List<String> keyHeaderValues) {
    if (keyHeaderValues.size() != 1) {
      return true;
    }
    try {
      IdempotencyKey.parseHeader(keyHeaderValues.get(0));
      return false;
    } catch (InvalidIdempotencyKeyException e) {
      return true;
    }
  }
}
