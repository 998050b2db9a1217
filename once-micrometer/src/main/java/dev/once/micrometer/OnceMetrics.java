package dev.once.micrometer;

import dev.once.OnceEvent;
import dev.once.OnceListener;
import dev.once.Outcome;
import dev.once.Recording;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * Counts the engine's events and times its store calls in a Micrometer {@link MeterRegistry}.
 *
 * <pre>{@code
 * Once once = Once.builder(store).listener(OnceMetrics.of(registry)).build();
 * }</pre>
 *
 * <table>
 *   <caption>Meters</caption>
 *   <tr><th>name</th><th>type</th><th>tags</th><th>counts</th></tr>
 *   <tr><td>{@code once.executions}</td><td>counter</td><td>{@code outcome}, {@code recording}</td>
 *       <td>operations that ran, by outcome ({@code completed}, {@code failed_final}, {@code transient})
 *       and what became of it ({@code recorded}, {@code released}, {@code result_not_stored},
 *       {@code lease_lost}, {@code unknown}, {@code unguarded})</td></tr>
 *   <tr><td>{@code once.replays}</td><td>counter</td><td>{@code outcome}</td><td>recorded outcomes handed to a retry</td></tr>
 *   <tr><td>{@code once.inflight.conflicts}</td><td>counter</td><td></td><td>duplicates refused while the first ran</td></tr>
 *   <tr><td>{@code once.fingerprint.mismatches}</td><td>counter</td><td></td><td>keys reused with another request</td></tr>
 *   <tr><td>{@code once.lease.steals}</td><td>counter</td><td></td><td>leases taken over from a silent holder</td></tr>
 *   <tr><td>{@code once.lease.lost}</td><td>counter</td><td></td><td>holders that found their lease stolen</td></tr>
 *   <tr><td>{@code once.failopen.passes}</td><td>counter</td><td></td><td>operations run unprotected because the store was down</td></tr>
 *   <tr><td>{@code once.store.failures}</td><td>counter</td><td></td><td>requests refused because the store was down</td></tr>
 *   <tr><td>{@code once.store.calls}</td><td>timer</td><td>{@code operation}</td><td>store round trips ({@code claim}, {@code complete}, …)</td></tr>
 * </table>
 *
 * <p>Every meter exists from the start, so dashboards show zeros rather than gaps. Meters are
 * looked up once, so an event costs one counter increment.
 */
public final class OnceMetrics implements OnceListener {

  private static final String[] STORE_OPERATIONS = {
    "claim",
    "get",
    "heartbeat",
    "checkpoint",
    "complete",
    "failFinal",
    "release",
    "purgeExpired",
    "inFlight"
  };

  private final MeterRegistry registry;
  private final Tags tags;
  private final Map<Outcome, Map<Recording, Counter>> executions = new EnumMap<>(Outcome.class);
  private final Map<Outcome, Counter> replays = new EnumMap<>(Outcome.class);
  private final Counter inFlightConflicts;
  private final Counter fingerprintMismatches;
  private final Counter leaseSteals;
  private final Counter leaseLost;
  private final Counter failOpenPasses;
  private final Counter storeFailures;
  private final Map<String, Timer> storeCalls = new ConcurrentHashMap<>();

  /**
   * The counter an event increments; one visitor for all events, so counting allocates no visitor.
   */
  private final OnceEvent.Visitor<Optional<Counter>> counterOf =
      new OnceEvent.Visitor<>() {
        @Override
        @SuppressWarnings(
            "NullAway") // safe: the constructor puts a counter for every outcome and every
        // recording
        public Optional<Counter> executed(OnceEvent.Executed executed) {
          return Optional.of(executions.get(executed.outcome()).get(executed.recording()));
        }

        @Override
        public Optional<Counter> replayed(OnceEvent.Replayed replayed) {
          // Only recorded outcomes are replayed; a transient one (never sent by the engine) counts
          // nowhere.
          return Optional.ofNullable(replays.get(replayed.outcome()));
        }

        @Override
        public Optional<Counter> inFlightConflict(OnceEvent.InFlightConflict conflict) {
          return Optional.of(inFlightConflicts);
        }

        @Override
        public Optional<Counter> fingerprintMismatch(OnceEvent.FingerprintMismatch mismatch) {
          return Optional.of(fingerprintMismatches);
        }

        @Override
        public Optional<Counter> leaseStolen(OnceEvent.LeaseStolen stolen) {
          return Optional.of(leaseSteals);
        }

        @Override
        public Optional<Counter> leaseLost(OnceEvent.LeaseLost lost) {
          return Optional.of(leaseLost);
        }

        @Override
        public Optional<Counter> failOpen(OnceEvent.FailOpen failOpen) {
          return Optional.of(failOpenPasses);
        }

        @Override
        public Optional<Counter> storeFailure(OnceEvent.StoreFailure failure) {
          return Optional.of(storeFailures);
        }
      };

  private OnceMetrics(MeterRegistry registry, Tags tags) {
    this.registry = registry;
    this.tags = tags;
    for (Outcome outcome : Outcome.values()) {
      Map<Recording, Counter> byRecording = new EnumMap<>(Recording.class);
      for (Recording recording : Recording.values()) {
        byRecording.put(
            recording,
            counter(
                "once.executions",
                "Operations that ran, by outcome and recording",
                Tags.of("outcome", name(outcome), "recording", name(recording))));
      }
      executions.put(outcome, byRecording);
      if (outcome != Outcome.TRANSIENT) {
        replays.put(
            outcome,
            counter(
                "once.replays",
                "Recorded outcomes handed to a retry",
                Tags.of("outcome", name(outcome))));
      }
    }
    inFlightConflicts =
        counter("once.inflight.conflicts", "Duplicates refused while the first ran", Tags.empty());
    fingerprintMismatches =
        counter("once.fingerprint.mismatches", "Keys reused with another request", Tags.empty());
    leaseSteals =
        counter("once.lease.steals", "Leases taken over from a holder that stopped", Tags.empty());
    leaseLost = counter("once.lease.lost", "Holders that found their lease stolen", Tags.empty());
    failOpenPasses =
        counter(
            "once.failopen.passes",
            "Operations run unprotected because the store was down",
            Tags.empty());
    storeFailures =
        counter("once.store.failures", "Requests refused because the store was down", Tags.empty());
    for (String operation : STORE_OPERATIONS) {
      storeCalls.put(operation, timer(operation));
    }
  }

  /** Metrics in this registry, without extra tags. */
  public static OnceMetrics of(MeterRegistry registry) {
    return of(registry, Tags.empty());
  }

  /** Metrics in this registry, every meter carrying these tags (e.g. the store's name). */
  public static OnceMetrics of(MeterRegistry registry, Iterable<Tag> tags) {
    return new OnceMetrics(
        Objects.requireNonNull(registry, "registry"),
        Tags.of(Objects.requireNonNull(tags, "tags")));
  }

  private Counter counter(String name, String description, Tags extra) {
    return Counter.builder(name).description(description).tags(tags.and(extra)).register(registry);
  }

  private Timer timer(String operation) {
    return Timer.builder("once.store.calls")
        .description("Idempotency store round trips")
        .tags(tags.and("operation", operation))
        .register(registry);
  }

  private static String name(Enum<?> e) {
    return e.name().toLowerCase(Locale.ROOT);
  }

  @Override
  public void onEvent(OnceEvent event) {
    event.accept(counterOf).ifPresent(Counter::increment);
  }

  @Override
  public void onStoreCall(String operation, long nanos) {
    storeCalls.computeIfAbsent(operation, this::timer).record(nanos, TimeUnit.NANOSECONDS);
  }
}
