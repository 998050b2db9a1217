package dev.once.http;

import dev.once.Scope;
import java.time.Duration;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * How fast one tenant may create new records: a token bucket per tenant (the tenant part of the
 * scope, across routes), so that a single abusive client cannot fill the store with fresh keys. A
 * request over the limit is answered 429 {@code idempotency-rate-limited} with {@code Retry-After}
 * and writes nothing. Replays, conflicts and every other answer that creates no record are given
 * their token back, so retries of known keys are never limited.
 *
 * <pre>{@code
 * HttpIdempotency.builder(once).newKeyLimit(NewKeyLimit.perSecond(50).burst(500).build())
 * }</pre>
 *
 * <p>Each tenant costs one map entry holding one {@code long} (the generic cell rate algorithm's
 * "theoretical arrival time"); the hot path is a map lookup and one compare-and-set. At most {@code
 * maxTenants} entries are kept: when the map is full, tenants whose bucket has refilled are dropped
 * (a full bucket is the same as no entry), and if none has, new tenants share one overflow bucket
 * until entries free up. Limits are per process: N gateway instances allow N times the rate.
 */
public final class NewKeyLimit {

  /** No limit (the default): a no-op on the hot path. */
  public static final NewKeyLimit UNLIMITED = new NewKeyLimit(0, 0, 0, System::nanoTime);

  /** Tenants longer than this are keyed by their hash, so an entry's size is bounded too. */
  private static final int MAX_TENANT_CHARS = 100;

  private static final long SWEEP_EVERY_NANOS = Duration.ofSeconds(1).toNanos();

  private final long intervalNanos;
  private final long toleranceNanos;
  private final int maxTenants;
  private final LongSupplier nanoClock;
  private final ConcurrentHashMap<String, AtomicLong> buckets = new ConcurrentHashMap<>();
  private final AtomicLong overflow = new AtomicLong(Long.MIN_VALUE);
  private final AtomicLong lastSweep = new AtomicLong(Long.MIN_VALUE);

  private NewKeyLimit(long intervalNanos, int burst, int maxTenants, LongSupplier nanoClock) {
    this.intervalNanos = intervalNanos;
    this.toleranceNanos = intervalNanos * burst;
    this.maxTenants = maxTenants;
    this.nanoClock = nanoClock;
  }

  /** Starts a limit of {@code newKeysPerSecond} new records per tenant, sustained. */
  public static Builder perSecond(double newKeysPerSecond) {
    return new Builder(newKeysPerSecond);
  }

  /** Whether this is {@link #UNLIMITED}. */
  public boolean unlimited() {
    return intervalNanos == 0;
  }

  /**
   * Takes a token for a new record of {@code tenant}: {@link Duration#ZERO} if one was free, or how
   * long until one will be (nothing taken).
   */
  Duration acquire(String tenant) {
    if (intervalNanos == 0) {
      return Duration.ZERO;
    }
    long now = nanoClock.getAsLong();
    AtomicLong bucket = bucket(tenant, now);
    while (true) {
      long tat = bucket.get();
      long next = Math.max(tat, now) + intervalNanos;
      if (next - now > toleranceNanos) {
        return Duration.ofNanos(next - now - toleranceNanos);
      }
      if (bucket.compareAndSet(tat, next)) {
        return Duration.ZERO;
      }
    }
  }

  /** Gives back the token {@link #acquire} took, when the request created no record after all. */
  void refund(String tenant) {
    if (intervalNanos == 0) {
      return;
    }
    AtomicLong bucket = buckets.get(key(tenant));
    (bucket == null ? overflow : bucket).addAndGet(-intervalNanos);
  }

  private AtomicLong bucket(String tenant, long now) {
    String key = key(tenant);
    AtomicLong bucket = buckets.get(key);
    if (bucket != null) {
      return bucket;
    }
    if (buckets.size() >= maxTenants && !sweep(now)) {
      return overflow;
    }
    return buckets.computeIfAbsent(key, k -> new AtomicLong(Long.MIN_VALUE));
  }

  /** Drops refilled buckets, at most once a second; true if there is room afterwards. */
  private boolean sweep(long now) {
    long last = lastSweep.get();
    if (last != Long.MIN_VALUE && now - last < SWEEP_EVERY_NANOS) {
      return buckets.size() < maxTenants;
    }
    if (lastSweep.compareAndSet(last, now)) {
      buckets.values().removeIf(b -> b.get() <= now);
    }
    return buckets.size() < maxTenants;
  }

  private static String key(String tenant) {
    return tenant.length() > MAX_TENANT_CHARS ? Scope.hash(tenant) : tenant;
  }

  /** How many tenants have an entry now (for tests and diagnostics). */
  int trackedTenants() {
    return buckets.size();
  }

  @Override
  public String toString() {
    return intervalNanos == 0
        ? "NewKeyLimit[unlimited]"
        : "NewKeyLimit["
            + (1e9 / intervalNanos)
            + "/s, burst "
            + (toleranceNanos / intervalNanos)
            + ", maxTenants "
            + maxTenants
            + "]";
  }

  /** Builds a {@link NewKeyLimit}; every setter validates its value. */
  public static final class Builder {
    private final double perSecond;
    private int burst = -1;
    private int maxTenants = 100_000;
    private LongSupplier nanoClock = System::nanoTime;

    private Builder(double perSecond) {
      if (!(perSecond >= 0.001 && perSecond <= 1_000_000)) {
        throw new IllegalArgumentException(
            "newKeysPerSecond must be 0.001-1000000, was " + perSecond);
      }
      this.perSecond = perSecond;
    }

    /**
     * How many new records a tenant may create at once after being idle (default: one second's
     * worth, at least 1).
     */
    public Builder burst(int burst) {
      if (burst < 1) {
        throw new IllegalArgumentException("burst must be at least 1, was " + burst);
      }
      this.burst = burst;
      return this;
    }

    /** How many tenants are tracked at most (default 100,000: a few MB). */
    public Builder maxTenants(int maxTenants) {
      if (maxTenants < 1) {
        throw new IllegalArgumentException("maxTenants must be at least 1, was " + maxTenants);
      }
      this.maxTenants = maxTenants;
      return this;
    }

    /** The clock, for tests. */
    Builder nanoClock(LongSupplier nanoClock) {
      this.nanoClock = nanoClock;
      return this;
    }

    public NewKeyLimit build() {
      long interval = Math.max(1, Math.round(1e9 / perSecond));
      int b = burst > 0 ? burst : (int) Math.max(1, Math.ceil(perSecond));
      return new NewKeyLimit(interval, b, maxTenants, nanoClock);
    }
  }
}
