package dev.once.spring;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.UnaryOperator;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.env.Environment;
import org.springframework.util.unit.DataSize;

/**
 * The attributes of one {@link Idempotent} as policy properties, for an HTTP handler and a bean
 * method alike. Apart from {@link IdempotentHandlers} because a bean method needs it in an
 * application without Spring MVC, whose classes that one names.
 */
final class IdempotentAttributes {

  private static final Set<String> SAFE = Set.of("GET", "HEAD", "OPTIONS", "TRACE");

  private IdempotentAttributes() {}

  /** The annotation's settings, or null if the handler answers only safe methods. */
  static OnceProperties.@Nullable Policy policyOf(
      Idempotent a, UnaryOperator<String> name, Environment env, Set<String> mapped) {
    OnceProperties.Policy p = new OnceProperties.Policy();
    if (a.methods().length > 0) {
      p.setMethods(List.of(a.methods()));
    } else if (!mapped.isEmpty()) {
      Set<String> unsafe = new LinkedHashSet<>(mapped);
      unsafe.removeAll(SAFE);
      if (unsafe.isEmpty()) {
        return null;
      }
      p.setMethods(List.copyOf(unsafe));
    }
    p.setKeyRequired(single(a.keyRequired(), "keyRequired", name));
    p.setKeyHeader(a.keyHeader().isEmpty() ? null : env.resolveRequiredPlaceholders(a.keyHeader()));
    p.setReplay(single(a.replay(), "replay", name));
    p.setLease(parse(a.lease(), "lease", name, env, DurationStyle::detectAndParse));
    p.setTtl(parse(a.ttl(), "ttl", name, env, DurationStyle::detectAndParse));
    p.setInFlight(single(a.inFlight(), "inFlight", name));
    p.setMaxWait(parse(a.maxWait(), "maxWait", name, env, DurationStyle::detectAndParse));
    p.setInFlightRetryAfter(
        parse(
            a.inFlightRetryAfter(),
            "inFlightRetryAfter",
            name,
            env,
            DurationStyle::detectAndParse));
    p.setMaxWaitersPerKey(single(a.maxWaitersPerKey(), "maxWaitersPerKey", name));
    p.setFailureMode(single(a.failureMode(), "failureMode", name));
    p.setStoreRetryAfter(
        parse(a.storeRetryAfter(), "storeRetryAfter", name, env, DurationStyle::detectAndParse));
    p.setMaxRequestBytes(parse(a.maxRequestBytes(), "maxRequestBytes", name, env, DataSize::parse));
    p.setMaxResponseBytes(
        parse(a.maxResponseBytes(), "maxResponseBytes", name, env, DataSize::parse));
    p.setExcludedJsonPointers(
        a.excludedJsonPointers().length == 0 ? null : List.of(a.excludedJsonPointers()));
    p.setReplayHeaderDenylist(
        a.replayHeaderDenylist().length == 0 ? null : List.of(a.replayHeaderDenylist()));
    p.setTransactional(single(a.transactional(), "transactional", name));
    return p;
  }

  private static <T> @Nullable T parse(
      String text,
      String attribute,
      UnaryOperator<String> name,
      Environment env,
      Function<String, T> parser) {
    if (text.isEmpty()) {
      return null;
    }
    try {
      return parser.apply(env.resolveRequiredPlaceholders(text).trim());
    } catch (IllegalArgumentException e) {
      throw new InvalidOncePropertyException(name.apply(attribute), text, e.getMessage());
    }
  }

  private static @Nullable Boolean single(
      boolean[] values, String attribute, UnaryOperator<String> name) {
    if (values.length > 1) {
      throw new InvalidOncePropertyException(
          name.apply(attribute), Arrays.toString(values), "give at most one value");
    }
    return values.length == 0 ? null : values[0];
  }

  private static @Nullable Integer single(
      int[] values, String attribute, UnaryOperator<String> name) {
    return single(Arrays.stream(values).boxed().toArray(Integer[]::new), attribute, name);
  }

  private static <T> @Nullable T single(T[] values, String attribute, UnaryOperator<String> name) {
    if (values.length > 1) {
      throw new InvalidOncePropertyException(
          name.apply(attribute), Arrays.toString(values), "give at most one value");
    }
    return values.length == 0 ? null : values[0];
  }
}
