package dev.once.micrometer;

import dev.once.OnceEvent;
import dev.once.OnceListener;
import dev.once.StoreCall;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import java.util.Locale;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * Writes the engine's decisions onto the {@link Observation} in scope when they happen: the
 * request's server span, in a traced application. The span gets an event per decision ({@code
 * once.executed}, {@code once.replayed}, {@code once.in-flight}, {@code once.mismatch}, {@code
 * once.lease.stolen}, {@code once.lease.lost}, {@code once.fail-open}, {@code once.store.failure})
 * and the attributes {@code once.decision}, {@code once.outcome}, {@code once.key} and, for a lease
 * taken over or lost, {@code once.fencing_token}.
 *
 * <p>Every store call is an observation of its own, named {@value #STORE_CALL} with the low
 * cardinality key {@code operation} ({@code claim}, {@code complete}, …): a child span of the same
 * span, with the store client's own spans (JDBC, Lettuce) beneath it, and the {@value #STORE_CALL}
 * timer where a meter handler is registered. Keys and scopes are never attached to store calls.
 *
 * <p>Every attribute is high-cardinality on purpose: a low-cardinality one would become a tag of
 * the application's own {@code http.server.requests} timer and change its tag set. The key is the
 * client's; the scope, which may hold a principal's name, is never attached.
 *
 * <p>The events reach the observation in scope on the thread that caused them: on a servlet request
 * thread that is the request's. An engine call on another thread (an asynchronous store's callback)
 * finds none, and its decision is left out rather than attached to the wrong span.
 */
public final class ObservedEvents implements OnceListener {

  /** The name of the observations of store calls. */
  public static final String STORE_CALL = "once.store";

  private final ObservationRegistry registry;

  private ObservedEvents(ObservationRegistry registry) {
    this.registry = registry;
  }

  /** The listener for this registry; with the no-op registry, {@link OnceListener#NONE}. */
  public static OnceListener of(ObservationRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    return registry.isNoop() ? OnceListener.NONE : new ObservedEvents(registry);
  }

  @Override
  public void onEvent(OnceEvent event) {
    Observation current = registry.getCurrentObservation();
    if (current == null || current.isNoop()) {
      return;
    }
    current.highCardinalityKeyValue("once.key", event.id().key().value());
    event.accept(new Annotation(current));
  }

  /**
   * The store call's observation, current on the calling thread until the call is sent (so the
   * client's spans go beneath it) and in a blocking store's executor while it runs the call there.
   */
  @Override
  public StoreCall storeCall(String operation) {
    Observation observation =
        Observation.createNotStarted(STORE_CALL, registry)
            .contextualName("once store " + operation)
            .lowCardinalityKeyValue("operation", operation)
            .start();
    Observation.Scope scope = observation.openScope();
    return new StoreCall() {
      @Override
      public void sent() {
        scope.close();
      }

      @Override
      public void ended(@Nullable Throwable failure) {
        if (failure != null) {
          observation.error(failure);
        }
        observation.stop();
      }

      @Override
      public Runnable within(Runnable task) {
        return observation.wrap(task);
      }
    };
  }

  /** What each event writes on the observation. */
  private static final class Annotation implements OnceEvent.Visitor<Void> {
    private final Observation span;

    Annotation(Observation span) {
      this.span = span;
    }

    @Override
    public Void executed(OnceEvent.Executed executed) {
      decided("executed");
      span.highCardinalityKeyValue("once.outcome", lower(executed.outcome()));
      span.highCardinalityKeyValue("once.recording", lower(executed.recording()));
      return null;
    }

    @Override
    public Void replayed(OnceEvent.Replayed replayed) {
      decided("replayed");
      span.highCardinalityKeyValue("once.outcome", lower(replayed.outcome()));
      return null;
    }

    @Override
    public Void inFlightConflict(OnceEvent.InFlightConflict inFlightConflict) {
      decided("in-flight");
      return null;
    }

    @Override
    public Void fingerprintMismatch(OnceEvent.FingerprintMismatch fingerprintMismatch) {
      decided("mismatch");
      return null;
    }

    @Override
    public Void leaseStolen(OnceEvent.LeaseStolen leaseStolen) {
      // Not a decision: the request that took the lease over goes on to execute.
      happened("lease.stolen");
      span.highCardinalityKeyValue("once.fencing_token", Long.toString(leaseStolen.token()));
      return null;
    }

    @Override
    public Void leaseLost(OnceEvent.LeaseLost leaseLost) {
      happened("lease.lost");
      span.highCardinalityKeyValue("once.fencing_token", Long.toString(leaseLost.token()));
      return null;
    }

    @Override
    public Void failOpen(OnceEvent.FailOpen failOpen) {
      decided("fail-open");
      return null;
    }

    @Override
    public Void storeFailure(OnceEvent.StoreFailure storeFailure) {
      happened("store.failure");
      return null;
    }

    private void decided(String decision) {
      happened(decision);
      span.highCardinalityKeyValue("once.decision", decision);
    }

    private void happened(String name) {
      span.event(Observation.Event.of("once." + name));
    }
  }

  private static String lower(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
