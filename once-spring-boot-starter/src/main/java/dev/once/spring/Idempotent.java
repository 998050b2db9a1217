package dev.once.spring;

import dev.once.FailureMode;
import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Gives a controller method (or every handler method of a controller) its own idempotency policy.
 * At startup the starter registers a route for each path the method is mapped to, ahead of the
 * {@code once.routes}; every attribute left out inherits {@code once.defaults.*}.
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
 */
@Target({ElementType.METHOD, ElementType.TYPE})
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Idempotent {

  /** The methods covered; default: the non-safe methods the handler is mapped to. */
  String[] methods() default {};

  /** Whether a request without an {@code Idempotency-Key} is refused with 400. */
  boolean[] keyRequired() default {};

  /** How long a lease lasts before another request may take the key over, e.g. {@code "30s"}. */
  String lease() default "";

  /** How long a finished response is kept and replayed, e.g. {@code "24h"}. */
  String ttl() default "";

  /** What a duplicate does while the first request runs. */
  InFlightMode[] inFlight() default {};

  /** In wait mode, the longest a duplicate is held, e.g. {@code "5s"}. */
  String maxWait() default "";

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
}
