package dev.once.spring;

import dev.once.ExecutionPolicy;
import dev.once.InFlightPolicy;
import dev.once.http.RoutePolicy;
import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.UnaryOperator;
import org.springframework.util.unit.DataSize;

/**
 * Maps layers of settings (the defaults, then a route's or a handler's own) onto the core builders,
 * which validate every value: there is one validation path, and its refusals are reported under
 * the name of the property that carried the value.
 */
final class PolicyMapper {

  /** How long a duplicate waits in wait mode when {@code max-wait} is not set. */
  static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(10);

  private PolicyMapper() {}

  /**
   * One source of settings.
   *
   * @param values the settings; unset ones are null
   * @param namer turns a property's kebab-case name into the name users wrote it under
   */
  record Layer(OnceProperties.Policy values, UnaryOperator<String> namer) {
    static Layer properties(String prefix, OnceProperties.Policy values) {
      return new Layer(values, field -> prefix + "." + field);
    }

    String name(String field) {
      return namer.apply(field);
    }
  }

  /** A route's policy, and whether it runs in a transaction (with the property that said so). */
  record Resolved(RoutePolicy policy, boolean transactional, String transactionalProperty) {}

  /** Applies the layers in order (a later layer's setting wins) on the core's defaults. */
  static Resolved resolve(String routeName, List<Layer> layers) {
    ExecutionPolicy.Builder execution = ExecutionPolicy.builder();
    RoutePolicy.Builder route = RoutePolicy.builder();
    InFlightMode mode = null;
    Duration maxWait = null;
    String maxWaitName = null;
    Layer pointers = null;
    Layer denylist = null;
    boolean transactional = false;
    String transactionalName = null;
    for (Layer layer : layers) {
      OnceProperties.Policy p = layer.values();
      set(layer, "methods", p.getMethods(), v -> route.methods(v.toArray(String[]::new)));
      set(layer, "key-required", p.getKeyRequired(), route::keyRequired);
      set(layer, "lease", p.getLease(), execution::lease);
      set(layer, "ttl", p.getTtl(), execution::ttl);
      set(layer, "failure-mode", p.getFailureMode(), execution::failureMode);
      set(layer, "max-request-bytes", p.getMaxRequestBytes(),
          v -> route.maxRequestBytes(toInt(v)));
      set(layer, "max-response-bytes", p.getMaxResponseBytes(), v -> execution.maxResultBytes(toInt(v)));
      set(layer, "max-waiters-per-key", p.getMaxWaitersPerKey(), route::maxWaitersPerKey);
      set(layer, "store-retry-after", p.getStoreRetryAfter(), execution::storeRetryAfter);
      if (p.getInFlight() != null) {
        mode = p.getInFlight();
      }
      if (p.getMaxWait() != null) {
        maxWait = p.getMaxWait();
        maxWaitName = layer.name("max-wait");
      }
      pointers = p.getExcludedJsonPointers() != null ? layer : pointers;
      denylist = p.getReplayHeaderDenylist() != null ? layer : denylist;
      if (p.getTransactional() != null) {
        transactional = p.getTransactional();
        transactionalName = layer.name("transactional");
      }
    }
    if (pointers != null) {
      Layer from = pointers;
      for (String pointer : from.values().getExcludedJsonPointers()) {
        set(from, "excluded-json-pointers", pointer, route::excludeJsonPointer);
      }
    }
    if (denylist != null) {
      Layer from = denylist;
      for (String header : from.values().getReplayHeaderDenylist()) {
        set(from, "replay-header-denylist", header, route::denyReplayHeader);
      }
    }
    if (mode == InFlightMode.WAIT) {
      Duration wait = maxWait == null ? DEFAULT_MAX_WAIT : maxWait;
      set(maxWaitName == null ? routeName + ".max-wait" : maxWaitName, wait,
          w -> execution.inFlight(InFlightPolicy.waitUpTo(w)));
    }
    if (transactional) {
      // The record is invisible to others until commit: a heartbeat from another thread would wait on it.
      execution.heartbeat(false);
    }
    try {
      return new Resolved(route.execution(execution.build()).build(), transactional, transactionalName);
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new InvalidOncePropertyException(routeName, null, e.getMessage());
    }
  }

  private static <T> void set(Layer layer, String field, T value, Consumer<T> setter) {
    if (value != null) {
      set(layer.name(field), value, setter);
    }
  }

  /** Calls the core setter; a refusal is reported under the property's name. Does nothing for null. */
  static <T> void set(String property, T value, Consumer<T> setter) {
    if (value == null) {
      return;
    }
    try {
      setter.accept(value);
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw new InvalidOncePropertyException(property, value, e.getMessage());
    }
  }

  private static int toInt(DataSize size) {
    if (size.toBytes() > Integer.MAX_VALUE) {
      throw new IllegalArgumentException("must be less than 2GB, was " + size);
    }
    return (int) size.toBytes();
  }
}
