package dev.once.http;

import dev.once.ExecutionPolicy;
import dev.once.OutcomeClassifier;
import dev.once.internal.HttpToken;
import dev.once.protocol.WireProtocol;
import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import org.jspecify.annotations.Nullable;

/**
 * How one route treats idempotency (DESIGN §4). Immutable; build with {@link #builder()}.
 *
 * @param methods the methods covered (default POST and PATCH); others pass through untouched
 * @param keyRequired whether a covered request without a key is refused with 400 (default false: it
 *     passes through unrecorded)
 * @param execution lease, ttl, in-flight behaviour, fail-open/closed and the response size cap
 *     ({@code maxResultBytes}: the body's bytes; the headers do not count against it)
 * @param excludedJsonPointers JSON pointers left out of the fingerprint (timestamps, trace ids)
 * @param replayHeaderDenylist response headers never stored nor replayed, lower case, on top of the
 *     hop-by-hop ones, {@code Date}, {@code Content-Length} and {@code Set-Cookie}
 * @param maxRequestBytes the largest request body accepted on a covered request (default 1 MiB)
 * @param maxWaitersPerKey in wait mode, how many duplicates may wait on one key; more are answered
 *     409 at once (default 16)
 * @param classifier judges responses, which decides what is recorded and replayed (default {@link
 *     HttpOutcomes#DEFAULT}; presets in {@link HttpOutcomes})
 * @param keyHeader the request header carrying the key (default {@code Idempotency-Key}); matched
 *     without regard to case, as every HTTP header name is
 * @param inFlightRetryAfter the {@code Retry-After} hint of a 409 for a duplicate of a request
 *     still running, capped by the lease's remaining time; null (the default) gives the remaining
 *     lease
 */
public record RoutePolicy(
    Set<String> methods,
    boolean keyRequired,
    ExecutionPolicy execution,
    Set<String> excludedJsonPointers,
    Set<String> replayHeaderDenylist,
    int maxRequestBytes,
    int maxWaitersPerKey,
    OutcomeClassifier<StoredResponse> classifier,
    String keyHeader,
    @Nullable Duration inFlightRetryAfter) {

  /** POST and PATCH covered, key optional, engine defaults. */
  public static final RoutePolicy DEFAULTS = builder().build();

  public RoutePolicy {
    methods = Set.copyOf(Objects.requireNonNull(methods, "methods"));
    Objects.requireNonNull(execution, "execution");
    excludedJsonPointers = Set.copyOf(excludedJsonPointers);
    replayHeaderDenylist = Set.copyOf(replayHeaderDenylist);
    Objects.requireNonNull(classifier, "classifier");
    Objects.requireNonNull(keyHeader, "keyHeader");
  }

  public static Builder builder() {
    return new Builder();
  }

  public Builder toBuilder() {
    Builder b = new Builder();
    b.methods = new TreeSet<>(methods);
    b.keyRequired = keyRequired;
    b.execution = execution;
    b.excluded = new TreeSet<>(excludedJsonPointers);
    b.denylist = new TreeSet<>(replayHeaderDenylist);
    b.maxRequestBytes = maxRequestBytes;
    b.maxWaitersPerKey = maxWaitersPerKey;
    b.classifier = classifier;
    b.keyHeader = keyHeader;
    b.inFlightRetryAfter = inFlightRetryAfter;
    return b;
  }

  /** Whether requests with this method are covered. */
  public boolean covers(String method) {
    return methods.contains(method);
  }

  /**
   * The {@code Retry-After} of a 409 for a duplicate of a running request: the configured hint,
   * never beyond the moment the lease ends and the key is free to take over.
   */
  Duration inFlightRetryAfter(Duration remainingLease) {
    return inFlightRetryAfter == null || inFlightRetryAfter.compareTo(remainingLease) > 0
        ? remainingLease
        : inFlightRetryAfter;
  }

  /** Builds a {@link RoutePolicy}; every setter validates its value. */
  public static final class Builder {
    private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

    /** Retry-After counts whole seconds. */
    private static final Duration MIN_RETRY_AFTER = Duration.ofSeconds(1);

    private static final Duration MAX_RETRY_AFTER = Duration.ofHours(1);

    private Set<String> methods = new TreeSet<>(Set.of("POST", "PATCH"));
    private boolean keyRequired;
    private ExecutionPolicy execution = ExecutionPolicy.DEFAULTS;
    private Set<String> excluded = new TreeSet<>();
    private Set<String> denylist = new TreeSet<>();
    private int maxRequestBytes = 1 << 20;
    private int maxWaitersPerKey = 16;
    private OutcomeClassifier<StoredResponse> classifier = HttpOutcomes.DEFAULT;
    private String keyHeader = WireProtocol.KEY_HEADER;
    private @Nullable Duration inFlightRetryAfter;

    private Builder() {}

    /**
     * The methods covered, e.g. {@code "POST", "PATCH", "PUT", "DELETE"}; safe methods are refused.
     */
    public Builder methods(String... methods) {
      if (methods.length == 0) {
        throw new IllegalArgumentException("methods must name at least one method");
      }
      Set<String> set = new TreeSet<>();
      for (String m : methods) {
        if (m == null || !m.matches("[A-Za-z]{1,20}")) {
          throw new IllegalArgumentException("methods: '" + m + "' is not an HTTP method");
        }
        String upper = m.toUpperCase(Locale.ROOT);
        if (SAFE.contains(upper)) {
          throw new IllegalArgumentException(
              "methods: " + upper + " is safe and never needs idempotency");
        }
        set.add(upper);
      }
      this.methods = set;
      return this;
    }

    public Builder keyRequired(boolean keyRequired) {
      this.keyRequired = keyRequired;
      return this;
    }

    public Builder execution(ExecutionPolicy execution) {
      this.execution = Objects.requireNonNull(execution, "execution");
      return this;
    }

    /** Leaves the value at this RFC 6901 JSON pointer out of the fingerprint. */
    public Builder excludeJsonPointer(String pointer) {
      if (pointer == null || !(pointer.isEmpty() || pointer.startsWith("/"))) {
        throw new IllegalArgumentException(
            "excludeJsonPointer: '" + pointer + "' is not a JSON pointer");
      }
      excluded.add(pointer);
      return this;
    }

    /** Replaces the JSON pointers left out of the fingerprint with {@code pointers}. */
    public Builder excludedJsonPointers(java.util.Collection<String> pointers) {
      Set<String> previous = excluded;
      excluded = new TreeSet<>();
      try {
        pointers.forEach(this::excludeJsonPointer);
      } catch (IllegalArgumentException e) {
        excluded = previous;
        throw e;
      }
      return this;
    }

    /** Replaces the response headers never stored nor replayed with {@code names}. */
    public Builder replayHeaderDenylist(java.util.Collection<String> names) {
      Set<String> previous = denylist;
      denylist = new TreeSet<>();
      try {
        names.forEach(this::denyReplayHeader);
      } catch (IllegalArgumentException e) {
        denylist = previous;
        throw e;
      }
      return this;
    }

    /** Never stores nor replays this response header. */
    public Builder denyReplayHeader(String name) {
      if (name == null || name.isBlank()) {
        throw new IllegalArgumentException("denyReplayHeader: header name must not be blank");
      }
      denylist.add(name.toLowerCase(Locale.ROOT));
      return this;
    }

    public Builder maxRequestBytes(int maxRequestBytes) {
      if (maxRequestBytes < 0) {
        throw new IllegalArgumentException(
            "maxRequestBytes must not be negative, was " + maxRequestBytes);
      }
      this.maxRequestBytes = maxRequestBytes;
      return this;
    }

    public Builder maxWaitersPerKey(int maxWaitersPerKey) {
      if (maxWaitersPerKey < 1) {
        throw new IllegalArgumentException(
            "maxWaitersPerKey must be at least 1, was " + maxWaitersPerKey);
      }
      this.maxWaitersPerKey = maxWaitersPerKey;
      return this;
    }

    public Builder classifier(OutcomeClassifier<StoredResponse> classifier) {
      this.classifier = Objects.requireNonNull(classifier, "classifier");
      return this;
    }

    /**
     * The request header carrying the key, e.g. {@code x-idempotency-key} (Open Banking) or a
     * vendor's header. The gateway forwards the key upstream under the same name.
     */
    public Builder keyHeader(String keyHeader) {
      if (keyHeader == null || !HttpToken.is(keyHeader, 64)) { // RFC 9110 §5.1: a name is a token
        throw new IllegalArgumentException(
            "keyHeader: '" + keyHeader + "' is not a header name (1 to 64 token characters)");
      }
      this.keyHeader = keyHeader;
      return this;
    }

    /**
     * The {@code Retry-After} a duplicate of a running request is told (1s to 1h): a short hint for
     * operations that usually finish in a moment. Never more than the lease's remaining time. Null
     * gives the remaining lease, the longest a client could have to wait.
     */
    public Builder inFlightRetryAfter(@Nullable Duration hint) {
      if (hint != null
          && (hint.compareTo(MIN_RETRY_AFTER) < 0 || hint.compareTo(MAX_RETRY_AFTER) > 0)) {
        throw new IllegalArgumentException(
            "inFlightRetryAfter must be between 1s and 1h, was " + Durations.format(hint));
      }
      this.inFlightRetryAfter = hint;
      return this;
    }

    public RoutePolicy build() {
      return new RoutePolicy(
          methods,
          keyRequired,
          execution,
          excluded,
          denylist,
          maxRequestBytes,
          maxWaitersPerKey,
          classifier,
          keyHeader,
          inFlightRetryAfter);
    }
  }
}
