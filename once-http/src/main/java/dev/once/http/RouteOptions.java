package dev.once.http;

import dev.once.FailureMode;
import dev.once.InFlightPolicy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.BiConsumer;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Every option a route takes, declared once: the gateway's YAML, the Spring Boot properties and
 * their metadata, and the tables in {@code docs/} are all derived from {@link #all()}, and tests in
 * each front end fail when one of them disagrees with it.
 *
 * <p>A front end collects the options a route sets (its own, over the {@code defaults}: a later
 * value replaces an earlier one, a list replaces the whole list) and calls {@link #apply} once.
 */
public final class RouteOptions {

  /** How long a duplicate is held in wait mode when {@code max-wait} is not set. */
  static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(10);

  static final List<String> IN_FLIGHT_CHOICES = List.of("reject", "wait");
  private static final List<String> FAILURE_MODES = List.of("fail-closed", "fail-open");

  private static final List<String> REPLAY_PRESETS =
      java.util.Arrays.stream(HttpOutcomes.values()).map(HttpOutcomes::optionName).toList();

  private static final List<RouteOption> ALL =
      List.of(
          option(
              "methods",
              RouteOption.Type.LIST,
              "covered methods; GET, HEAD, OPTIONS, TRACE are refused (always safe)",
              p -> String.join(", ", new java.util.TreeSet<>(p.methods())),
              (d, v) -> d.route.methods(list(v).toArray(String[]::new))),
          option(
              "key-required",
              RouteOption.Type.BOOLEAN,
              "true: a covered request without a key gets 400 idempotency-key-missing",
              p -> Boolean.toString(p.keyRequired()),
              (d, v) -> d.route.keyRequired(bool(v))),
          option(
              "key-header",
              RouteOption.Type.TEXT,
              "the request header carrying the key, e.g. x-idempotency-key; the gateway forwards it upstream under this name",
              RoutePolicy::keyHeader,
              (d, v) -> d.route.keyHeader(text(v))),
          choice(
              "replay",
              REPLAY_PRESETS,
              "what is recorded and replayed: default (2xx, 3xx and final 4xx; 5xx, 408, 423, 425, 429 release the key), stripe (every answer, 5xx too), success-only (2xx; anything else releases the key)",
              p -> p.classifier() instanceof HttpOutcomes preset ? preset.optionName() : "custom",
              (d, v) ->
                  d.route.classifier(
                      HttpOutcomes.valueOf(v.toUpperCase(Locale.ROOT).replace('-', '_')))),
          option(
              "lease",
              RouteOption.Type.DURATION,
              "how long an execution holds the key without a heartbeat (10ms to 1d); also how long an abandoned key stays in flight",
              p -> Durations.format(p.execution().lease()),
              (d, v) -> d.execution.lease(duration(v))),
          option(
              "ttl",
              RouteOption.Type.DURATION,
              "how long a finished response is kept and replayed (1s to 3650d, at least the lease)",
              p -> Durations.format(p.execution().ttl()),
              (d, v) -> d.execution.ttl(duration(v))),
          choice(
              "in-flight",
              IN_FLIGHT_CHOICES,
              "a duplicate of a running request: reject (409 + Retry-After) or wait (held up to max-wait, then replayed)",
              p -> p.execution().inFlight() instanceof InFlightPolicy.Wait ? "wait" : "reject",
              (d, v) -> d.inFlight(v)),
          option(
              "max-wait",
              RouteOption.Type.DURATION,
              "in wait mode, the longest a duplicate is held (at most 1h); then 409",
              p ->
                  Durations.format(
                      p.execution().inFlight() instanceof InFlightPolicy.Wait w
                          ? w.maxWait()
                          : DEFAULT_MAX_WAIT),
              (d, v) -> d.maxWait(duration(v))),
          option(
              "in-flight-retry-after",
              RouteOption.Type.DURATION,
              "the Retry-After of a 409 for a duplicate of a running request (1s to 1h), at most the lease's remaining time; unset: the remaining lease",
              p ->
                  p.inFlightRetryAfter() == null
                      ? "the remaining lease"
                      : Durations.format(p.inFlightRetryAfter()),
              (d, v) -> d.route.inFlightRetryAfter(duration(v))),
          option(
              "max-waiters-per-key",
              RouteOption.Type.COUNT,
              "in wait mode, duplicates held per key; more get 409 at once",
              p -> Integer.toString(p.maxWaitersPerKey()),
              (d, v) -> d.route.maxWaitersPerKey(count(v))),
          choice(
              "failure-mode",
              FAILURE_MODES,
              "store unavailable: fail-closed (503 idempotency-store-unavailable + Retry-After) or fail-open (run unprotected, logged and counted)",
              p ->
                  p.execution().failureMode() == FailureMode.FAIL_OPEN
                      ? "fail-open"
                      : "fail-closed",
              (d, v) ->
                  d.execution.failureMode(
                      v.equals("fail-open") ? FailureMode.FAIL_OPEN : FailureMode.FAIL_CLOSED)),
          option(
              "store-retry-after",
              RouteOption.Type.DURATION,
              "the Retry-After of a 503 when the store is unavailable (1s to 1h)",
              p -> Durations.format(p.execution().storeRetryAfter()),
              (d, v) -> d.execution.storeRetryAfter(duration(v))),
          option(
              "max-request-bytes",
              RouteOption.Type.BYTES,
              "the largest body of a covered request with a key; larger get 413 request-body-too-large",
              p -> Sizes.format(p.maxRequestBytes()),
              (d, v) -> d.route.maxRequestBytes(bytes(v))),
          option(
              "max-response-bytes",
              RouteOption.Type.BYTES,
              "the largest response body recorded (headers do not count); larger ones are delivered, count as done, and retries get 409 idempotency-response-unavailable",
              p -> Sizes.format(p.execution().maxResultBytes()),
              (d, v) -> d.execution.maxResultBytes(bytes(v))),
          option(
              "excluded-json-pointers",
              RouteOption.Type.LIST,
              "JSON pointers left out of the fingerprint (timestamps, trace ids), e.g. /metadata/sent_at",
              p ->
                  p.excludedJsonPointers().isEmpty()
                      ? "none"
                      : String.join(", ", p.excludedJsonPointers()),
              (d, v) -> d.route.excludedJsonPointers(list(v))),
          option(
              "replay-header-denylist",
              RouteOption.Type.LIST,
              "response headers never stored nor replayed, on top of hop-by-hop ones, Date, Content-Length and Set-Cookie",
              p ->
                  p.replayHeaderDenylist().isEmpty()
                      ? "none"
                      : String.join(", ", p.replayHeaderDenylist()),
              (d, v) -> d.route.replayHeaderDenylist(list(v))));

  private static final Map<String, RouteOption> BY_NAME = index();

  private RouteOptions() {}

  /** Every route option, in the order docs list them. */
  public static List<RouteOption> all() {
    return ALL;
  }

  /** The option called {@code name}, or null. */
  public static @Nullable RouteOption named(String name) {
    return BY_NAME.get(name);
  }

  /**
   * The policy {@code values} (option name to value, as {@link RouteOption.Type} says) describe on
   * top of {@code base}.
   *
   * @throws InvalidRouteOptionException naming the option whose value the builders refused, or with
   *     an empty name when two options contradict each other (a ttl shorter than the lease)
   */
  public static RoutePolicy apply(RoutePolicy base, Map<String, ?> values) {
    RouteDraft draft = new RouteDraft(base);
    for (Map.Entry<String, ?> e : values.entrySet()) {
      RouteOption option = BY_NAME.get(e.getKey());
      if (option == null) {
        throw new InvalidRouteOptionException(
            e.getKey(), "unknown option; known: " + String.join(", ", BY_NAME.keySet()));
      }
      if (e.getValue() == null) {
        throw new InvalidRouteOptionException(option.name(), "must have a value");
      }
      try {
        option.apply(draft, e.getValue());
      } catch (IllegalArgumentException | IllegalStateException ex) {
        throw new InvalidRouteOptionException(option.name(), ex.getMessage());
      }
    }
    try {
      return draft.build();
    } catch (IllegalArgumentException | IllegalStateException ex) {
      throw new InvalidRouteOptionException("", ex.getMessage());
    }
  }

  private static Map<String, RouteOption> index() {
    Map<String, RouteOption> map = new LinkedHashMap<>();
    for (RouteOption o : ALL) {
      map.put(o.name(), o);
    }
    return map;
  }

  private static RouteOption option(
      String name,
      RouteOption.Type type,
      String description,
      Function<RoutePolicy, String> shown,
      BiConsumer<RouteDraft, Object> setter) {
    return new RouteOption(name, type, List.of(), description, shown, setter);
  }

  private static RouteOption choice(
      String name,
      List<String> choices,
      String description,
      Function<RoutePolicy, String> shown,
      BiConsumer<RouteDraft, String> setter) {
    return new RouteOption(
        name,
        RouteOption.Type.CHOICE,
        choices,
        description,
        shown,
        (d, v) -> {
          String text =
              (v instanceof Enum<?> e ? e.name() : text(v))
                  .toLowerCase(Locale.ROOT)
                  .replace('_', '-');
          if (!choices.contains(text)) {
            throw new IllegalArgumentException(
                "must be one of " + String.join(", ", choices) + ", was '" + v + "'");
          }
          setter.accept(d, text);
        });
  }

  private static Duration duration(Object v) {
    if (v instanceof Duration d) {
      return d;
    }
    throw new IllegalArgumentException("must be a duration, was '" + v + "'");
  }

  private static int bytes(Object v) {
    long n = number(v);
    if (n > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("must be at most 2GiB, was " + n + " bytes");
    }
    return (int) n;
  }

  private static int count(Object v) {
    long n = number(v);
    if (n > Integer.MAX_VALUE || n < Integer.MIN_VALUE) {
      throw new IllegalArgumentException("must be a whole number below 2^31, was " + n);
    }
    return (int) n;
  }

  private static long number(Object v) {
    if (v instanceof Integer || v instanceof Long || v instanceof Short || v instanceof Byte) {
      return ((Number) v).longValue();
    }
    throw new IllegalArgumentException("must be a whole number, was '" + v + "'");
  }

  private static boolean bool(Object v) {
    if (v instanceof Boolean b) {
      return b;
    }
    return switch (text(v).trim().toLowerCase(Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException("must be true or false, was '" + v + "'");
    };
  }

  private static List<String> list(Object v) {
    List<String> out = new ArrayList<>();
    if (v instanceof Collection<?> items) {
      for (Object item : items) {
        out.add(text(item));
      }
    } else {
      out.add(text(v));
    }
    return out;
  }

  private static String text(Object v) {
    if (v == null || v instanceof Map || v instanceof Collection) {
      throw new IllegalArgumentException("must be a single value");
    }
    return String.valueOf(v);
  }
}
