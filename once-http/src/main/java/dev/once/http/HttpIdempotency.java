package dev.once.http;

import dev.once.Admission;
import dev.once.ExecutionPolicy;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.InFlightPolicy;
import dev.once.InvalidIdempotencyKeyException;
import dev.once.Once;
import dev.once.Scope;
import dev.once.protocol.WireProtocol;
import dev.once.store.RecordId;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The HTTP semantics of DESIGN §4, written once for every framework: the servlet filter and the
 * gateway only adapt their request and response types to {@link IncomingRequest}, {@link Decision}
 * and {@link StoredResponse}.
 *
 * <pre>{@code
 * HttpIdempotency http = HttpIdempotency.builder(once)
 *     .scope(ScopeResolver.header("Api-Key"))
 *     .route("/api/payments", RoutePolicy.builder().keyRequired(true).build())
 *     .build();
 * Route route = http.route(path);                       // before reading the body: its size limit
 * Decision d = http.begin(route, request);
 * }</pre>
 */
public final class HttpIdempotency {

  private static final Logger log = LoggerFactory.getLogger(HttpIdempotency.class);

  /**
   * The request header carrying the key, unless a route names another ({@link
   * RoutePolicy#keyHeader}).
   */
  public static final String KEY_HEADER = WireProtocol.KEY_HEADER;

  /** The response header marking a replay. */
  public static final String REPLAYED_HEADER = WireProtocol.REPLAYED_HEADER;

  /** Whether a decision created a record, which is what the new-key limit counts. */
  private static final Decision.Visitor<Boolean> CREATED_RECORD =
      new Decision.Visitor<>() {
        @Override
        public Boolean passThrough(Decision.PassThrough passThrough) {
          return false;
        }

        @Override
        public Boolean respond(Decision.Respond respond) {
          return false;
        }

        @Override
        public Boolean proceed(Decision.Proceed proceed) {
          return true;
        }
      };

  private final Once once;
  private final List<Route> routes;
  private final Route fallback;
  private final ScopeResolver scopes;
  private final ConcurrentHashMap<RecordId, Integer> waiters = new ConcurrentHashMap<>();
  private final NewKeyLimit newKeys;

  private HttpIdempotency(Builder b) {
    this.once = b.once;
    this.routes = List.copyOf(b.routes);
    this.fallback = new Route("/**", b.defaults, b.coverage == Coverage.ALL);
    this.scopes = b.scopes;
    this.newKeys = b.newKeys;
  }

  public static Builder builder(Once once) {
    return new Builder(once);
  }

  /** The route a path belongs to: the first configured pattern that matches, else the default. */
  public Route route(String path) {
    for (Route r : routes) {
      if (r.matches(path)) {
        return r;
      }
    }
    return fallback;
  }

  /**
   * The scope a request's key is recorded under: its route's operation, owned by the tenant the
   * scope resolver finds in it. For consoles, which find a record from what a client sent instead
   * of from the encoded scope.
   *
   * @throws TenantException if the resolver refuses the request (two tenants, or none where one is
   *     required)
   */
  public Scope scopeOf(IncomingRequest request) {
    return scopeOf(scopes.tenantOf(request), route(request.path()), request.method());
  }

  /** Decides what to do with a request whose whole body has been read. */
  public Decision begin(Route route, IncomingRequest request) {
    return prepare(route, request)
        .then(
            ready -> {
              if (!ready.newKeyWait().isZero()) {
                // Over the limit: a retry of a known key is still answered (one store read); a new
                // key is refused.
                return overTheLimit(
                    route, ready, once.existing(ready.scope(), ready.key(), ready.fingerprint()));
              }
              return refundUnlessCreated(ready, admit(route, ready));
            });
  }

  /**
   * {@link #begin}, without a thread waiting for the store where its client is asynchronous (see
   * {@link Once#beginAsync}); a duplicate in wait mode holds no thread while it waits.
   *
   * <p>The stage always completes with a decision, so an adapter on an event loop has no failure
   * path to forget: where {@link #begin} would throw (the engine closed while the application
   * stops, or a defect), the decision is a 503 problem, and nothing was claimed or run.
   */
  public CompletionStage<Decision> beginAsync(Route route, IncomingRequest request) {
    CompletionStage<Decision> decision;
    try {
      decision =
          prepare(route, request)
              .thenAsync(
                  ready -> {
                    if (!ready.newKeyWait().isZero()) {
                      return once.existingAsync(ready.scope(), ready.key(), ready.fingerprint())
                          .thenApply(known -> overTheLimit(route, ready, known));
                    }
                    return admitAsync(route, ready)
                        .thenApply(admitted -> refundUnlessCreated(ready, admitted));
                  });
    } catch (RuntimeException e) {
      decision = CompletableFuture.failedFuture(e);
    }
    return decision.exceptionally(
        failure -> {
          log.warn("could not decide on a {} request to {}", request.method(), route, failure);
          return new Decision.Respond(
              Problems.render(
                  ProblemType.STORE_UNAVAILABLE,
                  "Nothing was executed; retry later.",
                  java.time.Duration.ofSeconds(1)),
              false);
        });
  }

  /**
   * A request checked and fingerprinted: either answered already (not covered, no key, a bad key, a
   * body too large, an ambiguous tenant: no store call needed) or {@link Ready} to be admitted.
   */
  private interface Prepared {
    Decision then(Function<Ready, Decision> admit);

    CompletionStage<Decision> thenAsync(Function<Ready, CompletionStage<Decision>> admit);
  }

  private record Answered(Decision answer) implements Prepared {
    @Override
    public Decision then(Function<Ready, Decision> admit) {
      return answer;
    }

    @Override
    public CompletionStage<Decision> thenAsync(Function<Ready, CompletionStage<Decision>> admit) {
      return CompletableFuture.completedFuture(answer);
    }
  }

  /**
   * @param newKeyWait zero, or how long the tenant must wait before it may create another record
   */
  private record Ready(
      String tenant,
      Scope scope,
      IdempotencyKey key,
      Fingerprint fingerprint,
      java.time.Duration newKeyWait)
      implements Prepared {
    @Override
    public Decision then(Function<Ready, Decision> admit) {
      return admit.apply(this);
    }

    @Override
    public CompletionStage<Decision> thenAsync(Function<Ready, CompletionStage<Decision>> admit) {
      return admit.apply(this);
    }
  }

  private Prepared prepare(Route route, IncomingRequest request) {
    RoutePolicy policy = route.policy();
    String method = request.method().toUpperCase(Locale.ROOT);
    if (!route.covers(method)) {
      return new Answered(new Decision.PassThrough(Decision.Reason.NOT_COVERED));
    }
    List<String> keyHeaders = request.headers().all(policy.keyHeader());
    if (keyHeaders.isEmpty()) {
      return new Answered(
          policy.keyRequired()
              ? problem(
                  ProblemType.KEY_MISSING,
                  "This route requires an " + policy.keyHeader() + " header.")
              : new Decision.PassThrough(Decision.Reason.NO_KEY));
    }
    if (keyHeaders.size() > 1) {
      return new Answered(
          problem(ProblemType.KEY_INVALID, "Send exactly one " + policy.keyHeader() + " header."));
    }
    IdempotencyKey key;
    try {
      key = IdempotencyKey.parseHeader(keyHeaders.get(0));
    } catch (InvalidIdempotencyKeyException e) {
      return new Answered(problem(ProblemType.KEY_INVALID, e.getMessage() + "."));
    }
    if (request.body().length > policy.maxRequestBytes()) {
      return new Answered(
          new Decision.Respond(Problems.bodyTooLarge(policy.maxRequestBytes()), false));
    }
    String tenant;
    try {
      tenant = scopes.tenantOf(request);
    } catch (TenantException e) {
      return new Answered(
          problem(e.problem(), e.getMessage())); // names the header, never its values
    }
    return new Ready(
        tenant,
        scopeOf(tenant, route, method),
        key,
        fingerprint(route, method, request),
        newKeys.acquire(tenant));
  }

  private Decision overTheLimit(Route route, Ready p, Optional<Admission> known) {
    return known
        .map(k -> decide(route, k))
        .orElseGet(
            () ->
                problem(
                    ProblemType.RATE_LIMITED,
                    "Too many new idempotency keys from this client; retry later.",
                    p.newKeyWait()));
  }

  private Decision refundUnlessCreated(Ready p, Decision decision) {
    if (!decision.accept(CREATED_RECORD)) {
      newKeys.refund(p.tenant()); // no record was created: replays and conflicts are never limited
    }
    return decision;
  }

  private Decision admit(Route route, Ready p) {
    ExecutionPolicy execution = route.leasing();
    if (!(execution.inFlight() instanceof InFlightPolicy.Wait)) {
      return decide(route, once.begin(p.scope(), p.key(), p.fingerprint(), execution));
    }
    RecordId id = RecordId.of(p.scope(), p.key());
    try {
      return decide(route, once.begin(p.scope(), p.key(), p.fingerprint(), park(route, id)));
    } finally {
      unpark(id);
    }
  }

  private CompletionStage<Decision> admitAsync(Route route, Ready p) {
    ExecutionPolicy execution = route.leasing();
    if (!(execution.inFlight() instanceof InFlightPolicy.Wait)) {
      return once.beginAsync(p.scope(), p.key(), p.fingerprint(), execution)
          .thenApply(a -> decide(route, a));
    }
    RecordId id = RecordId.of(p.scope(), p.key());
    return once.beginAsync(p.scope(), p.key(), p.fingerprint(), park(route, id))
        .whenComplete((a, e) -> unpark(id))
        .thenApply(a -> decide(route, a));
  }

  /**
   * Counts one more duplicate parked on {@code id} and says how it may begin: waiting, or, over the
   * route's bound, refusing at once, so the rest are told to retry instead of piling up. Counted
   * with compute(), so a count dropping to zero and removed can never be raised by a caller that
   * fetched it just before: every caller is counted in the map's one entry. Every call is paired
   * with {@link #unpark}.
   */
  private ExecutionPolicy park(Route route, RecordId id) {
    int parked = waiters.merge(id, 1, Integer::sum);
    return parked <= route.policy().maxWaitersPerKey() ? route.leasing() : route.rejecting();
  }

  private void unpark(RecordId id) {
    waiters.computeIfPresent(id, (k, n) -> n == 1 ? null : n - 1);
  }

  private Decision decide(Route route, Admission admission) {
    return admission.accept(
        new Admission.Visitor<>() {
          @Override
          public Decision proceed(Admission.Proceed proceed) {
            return new Decision.Proceed(new Exchange(once, proceed.lease(), route.policy()));
          }

          @Override
          public Decision replay(Admission.Replay replay) {
            return HttpIdempotency.replay(replay);
          }

          @Override
          public Decision replayFailure(Admission.ReplayFailure replayFailure) {
            // A failure recorded by a non-HTTP caller of the same key: there is no response to
            // replay.
            return notReplayable();
          }

          @Override
          public Decision inFlight(Admission.InFlight inFlight) {
            return problem(
                ProblemType.IN_FLIGHT,
                "A request with this key is being processed; retry later.",
                route.policy().inFlightRetryAfter(inFlight.retryAfter()));
          }

          @Override
          public Decision fingerprintMismatch(Admission.FingerprintMismatch mismatch) {
            return problem(
                ProblemType.KEY_REUSED,
                "This key was used with a different request; use a new key.");
          }

          @Override
          public Decision responseUnavailable(Admission.ResponseUnavailable unavailable) {
            return notReplayable();
          }

          @Override
          public Decision storeUnavailable(Admission.StoreUnavailable unavailable) {
            return problem(
                ProblemType.STORE_UNAVAILABLE,
                "Nothing was executed; retry later.",
                unavailable.retryAfter());
          }

          @Override
          public Decision unguarded(Admission.Unguarded unguarded) {
            return new Decision.PassThrough(Decision.Reason.FAIL_OPEN);
          }

          private Decision notReplayable() {
            return problem(
                ProblemType.RESPONSE_UNAVAILABLE,
                "The request was processed; its response cannot be replayed. Do not retry with this key.");
          }
        });
  }

  private static Decision replay(Admission.Replay replay) {
    StoredResponse recorded;
    try {
      recorded = StoredResponse.CODEC.decode(replay.value());
    } catch (RuntimeException e) {
      log.warn("a recorded response could not be decoded; answering response-unavailable", e);
      return problem(ProblemType.RESPONSE_UNAVAILABLE, "The recorded response cannot be replayed.");
    }
    return new Decision.Respond(
        new StoredResponse(
            recorded.status(), recorded.headers().with(REPLAYED_HEADER, "true"), recorded.body()),
        true);
  }

  private static Scope scopeOf(String tenant, Route route, String method) {
    String operation = method + " " + route.pattern();
    try {
      return Scope.of(tenant, operation);
    } catch (IllegalArgumentException tooLongOrControlCharacters) {
      // A principal name we cannot store as it is still identifies its owner by hash.
      return Scope.of(Scope.hash(tenant), operation);
    }
  }

  /**
   * The body's media type essence is part of the request (a JSON Patch is not a merge patch of the
   * same bytes), its parameters are not (a retry may spell {@code charset} differently).
   */
  private static Fingerprint fingerprint(Route route, String method, IncomingRequest request) {
    String contentType = request.headers().first("Content-Type").orElse(null);
    return route
        .fingerprinter()
        .content(contentType, request.body(), method, request.path(), request.query());
  }

  private static Decision problem(ProblemType type, @Nullable String detail) {
    return new Decision.Respond(Problems.render(type, detail), false);
  }

  private static Decision problem(
      ProblemType type, @Nullable String detail, java.time.@Nullable Duration retryAfter) {
    return new Decision.Respond(Problems.render(type, detail, retryAfter), false);
  }

  /** Builds an {@link HttpIdempotency}. */
  public static final class Builder {
    private final Once once;
    private final List<Route> routes = new ArrayList<>();
    private RoutePolicy defaults = RoutePolicy.DEFAULTS;
    private ScopeResolver scopes = ScopeResolver.header("Api-Key");
    private NewKeyLimit newKeys = NewKeyLimit.UNLIMITED;
    private Coverage coverage = Coverage.ALL;

    private Builder(Once once) {
      this.once = Objects.requireNonNull(once, "once");
    }

    /** The policy of paths no route matches (default {@link RoutePolicy#DEFAULTS}). */
    public Builder defaults(RoutePolicy defaults) {
      this.defaults = Objects.requireNonNull(defaults, "defaults");
      return this;
    }

    /**
     * Whether paths no route matches are guarded with the defaults ({@link Coverage#ALL}, the
     * default) or pass through untouched ({@link Coverage#ROUTES}).
     */
    public Builder coverage(Coverage coverage) {
      this.coverage = Objects.requireNonNull(coverage, "coverage");
      return this;
    }

    /** Adds a route; the first matching route wins. */
    public Builder route(String pattern, RoutePolicy policy) {
      routes.add(new Route(pattern, policy));
      return this;
    }

    /** Who owns a key (default: the SHA-256 of the {@code Api-Key} header). */
    public Builder scope(ScopeResolver scopes) {
      this.scopes = Objects.requireNonNull(scopes, "scopes");
      return this;
    }

    /**
     * How fast one tenant may create new records (default {@link NewKeyLimit#UNLIMITED}); over it,
     * a request is answered 429 {@code idempotency-rate-limited} and nothing is stored.
     */
    public Builder newKeyLimit(NewKeyLimit newKeys) {
      this.newKeys = Objects.requireNonNull(newKeys, "newKeys");
      return this;
    }

    public HttpIdempotency build() {
      return new HttpIdempotency(this);
    }
  }
}
