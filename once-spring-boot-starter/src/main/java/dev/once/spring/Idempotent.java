package dev.once.spring;

import dev.once.FailureMode;
import dev.once.http.HttpOutcomes;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.jspecify.annotations.Nullable;

/**
 * Makes a method idempotent, in one of two ways chosen by {@link #key()}.
 *
 * <p><b>Without {@code key}: an HTTP handler.</b> Gives a controller method (or every handler
 * method of a controller) its own idempotency policy. At startup the starter registers a route for
 * each path the method is mapped to, ahead of the {@code once.routes}; every attribute left out
 * inherits {@code once.defaults.*}. The key is the request's {@code Idempotency-Key} header.
 *
 * <pre>{@code
 * @PostMapping("/api/payments")
 * @Idempotent(keyRequired = true, lease = "10s", inFlight = InFlightMode.WAIT, maxWait = "5s")
 * ResponseEntity<Payment> create(@RequestBody PaymentRequest request) { ... }
 * }</pre>
 *
 * <p>Attributes that may be left out are arrays, so that leaving one out can mean "inherit": write
 * {@code keyRequired = true}, not {@code keyRequired = {true}}. Durations and sizes are strings in
 * Spring's formats ({@code "30s"}, {@code "PT30S"}, {@code "1MB"}) and may be {@code
 * ${placeholders}}. An invalid value stops the application at startup, naming the attribute and the
 * method.
 *
 * <p><b>With {@code key}: any Spring bean method.</b> The call is intercepted (Spring AOP): the
 * key, scope and fingerprint are computed from the arguments with SpEL, the method runs at most
 * once per (scope, key), and every later call with that key gets the recorded result (or final
 * failure) back without running it. Only the execution attributes apply ({@code lease}, {@code
 * ttl}, {@code inFlight}, {@code maxWait}, {@code failureMode}, {@code storeRetryAfter}, {@code
 * maxResponseBytes}); the HTTP ones stop the application at startup.
 *
 * <pre>{@code
 * @Idempotent(key = "#order.id", fingerprint = {"#order.amount", "#order.currency"})
 * public Receipt charge(Order order) { ... }
 * }</pre>
 *
 * <p>A caller that must tell a replay from a first run calls a method that returns {@link Result}
 * (or a {@code CompletableFuture} or {@code Mono} of one).
 *
 * <p>See docs/spring-boot.md, "Idempotent service methods", for return types, exceptions and the
 * self-invocation caveat.
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

  /**
   * A SpEL expression over the arguments giving the key ({@code "#order.id"}, {@code "#p0"}, {@code
   * "#a0.id + ':' + #a1"}, {@code "@keys.of(#order)"}); setting it makes this a method-level
   * idempotent call rather than an HTTP handler route. Its value's {@code toString()} is the key:
   * 1-255 printable ASCII characters; a null value throws {@link IdempotencyKeyInvalidException}.
   */
  String key() default "";

  /**
   * With {@link #key()}: a SpEL expression giving the scope, the namespace the key is unique in
   * ({@code "'payments'"} for a constant, {@code "#order.merchantId"}); default: the declaring
   * class's name and the method's name. Methods with the same scope share their keys.
   */
  String scope() default "";

  /**
   * With {@link #key()}: SpEL expressions whose values, written as JSON, make the fingerprint: a
   * call with the same key but other values gets {@link IdempotencyKeyReusedException}. Default:
   * every argument.
   */
  String[] fingerprint() default {};

  /**
   * With {@link #key()}: the name of a {@link dev.once.ResultCodec} bean that stores the result;
   * default: JSON with the application's Jackson mapper (Jackson 2's {@code ObjectMapper} on Boot
   * 3, Jackson 3's {@code JsonMapper} on Boot 4), read back as the method's generic return type.
   */
  String codec() default "";

  /**
   * With {@link #key()}: the exceptions that are final failures, recorded and thrown again to every
   * later call with the key (as well as {@link dev.once.FinalFailure}); any other exception is
   * transient: the key is released and a later call runs the method again.
   */
  Class<? extends Throwable>[] noRetryFor() default {};

  /** The methods covered; default: the non-safe methods the handler is mapped to. */
  String[] methods() default {};

  /** Whether a request without a key is refused with 400. */
  boolean[] keyRequired() default {};

  /** The request header carrying the key, e.g. {@code "x-idempotency-key"}. */
  String keyHeader() default "";

  /** Which answers are recorded and replayed: a preset of {@link HttpOutcomes}. */
  HttpOutcomes[] replay() default {};

  /** How long a lease lasts before another request may take the key over, e.g. {@code "30s"}. */
  String lease() default "";

  /** How long a finished response is kept and replayed, e.g. {@code "24h"}. */
  String ttl() default "";

  /** What a duplicate does while the first request runs. */
  InFlightMode[] inFlight() default {};

  /** In wait mode, the longest a duplicate is held, e.g. {@code "5s"}. */
  String maxWait() default "";

  /**
   * The Retry-After of a 409 for a duplicate of a running request, e.g. {@code "2s"}; at most the
   * lease's remaining time.
   */
  String inFlightRetryAfter() default "";

  /** In wait mode, how many duplicates may wait on one key; more get 409 at once. */
  int[] maxWaitersPerKey() default {};

  /** What happens when the store is unavailable. */
  FailureMode[] failureMode() default {};

  /** The Retry-After of a 503 when the store is unavailable, e.g. {@code "5s"}. */
  String storeRetryAfter() default "";

  /** The largest request body accepted, e.g. {@code "1MB"}. */
  String maxRequestBytes() default "";

  /** The largest response recorded, e.g. {@code "4MB"}. */
  String maxResponseBytes() default "";

  /** JSON pointers left out of the fingerprint. */
  String[] excludedJsonPointers() default {};

  /** Response headers never stored nor replayed. */
  String[] replayHeaderDenylist() default {};

  /**
   * Whether the claim, the handler's writes and the recorded response commit in one transaction.
   */
  boolean[] transactional() default {};

  /**
   * What an {@code @Idempotent(key)} method returns when its callers must know whether this call
   * ran it: the method returns {@code Result.of(value)}, and the caller gets the value with {@link
   * #replayed()} false on the call that ran it, true on every call answered from the record (as
   * {@code Idempotent-Replayed: true} tells an HTTP client). Works the same inside a {@code
   * CompletionStage}, {@code CompletableFuture} or {@code Mono}. Only {@link #value()} is recorded:
   * the codec reads and writes the value's type, and a method may switch between {@code T} and
   * {@code Result<T>} without changing its records.
   *
   * <pre>{@code
   * @Idempotent(key = "#order.id")
   * public Idempotent.Result<Receipt> charge(Order order) {
   *   return Idempotent.Result.of(bank.charge(order));
   * }
   * }</pre>
   *
   * @param value the method's value (a replay's is the recorded one, decoded)
   * @param replayed whether the method did not run for this call and the value is the recorded one
   * @param <T> the value's type
   */
  record Result<T>(@Nullable T value, boolean replayed) {

    /** What the method returns: its value; the call that runs it tells its caller so. */
    public static <T> Result<T> of(@Nullable T value) {
      return new Result<>(value, false);
    }
  }
}
