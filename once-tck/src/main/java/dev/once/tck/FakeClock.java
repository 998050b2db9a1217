package dev.once.tck;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A clock that moves only when told to, for stores whose time can be injected: give it to the store
 * and override {@link IdempotencyStoreContract#advanceTime(Duration)} with {@link
 * #advance(Duration)}, and lease and expiry tests run without sleeping. Safe to read and advance
 * from many threads; it never goes backwards.
 */
public final class FakeClock extends Clock {

  /** Where {@link #create()} starts: a fixed instant, so failures reproduce. */
  public static final Instant DEFAULT_START = Instant.parse("2030-01-01T00:00:00Z");

  private final AtomicReference<Instant> now;
  private final ZoneId zone;

  private FakeClock(AtomicReference<Instant> now, ZoneId zone) {
    this.now = now;
    this.zone = zone;
  }

  /** Returns a clock standing at {@link #DEFAULT_START}, in UTC. */
  public static FakeClock create() {
    return at(DEFAULT_START);
  }

  /** Returns a clock standing at {@code start}, in UTC. */
  public static FakeClock at(Instant start) {
    return new FakeClock(
        new AtomicReference<>(Objects.requireNonNull(start, "start")), ZoneOffset.UTC);
  }

  /** Moves the clock forward by {@code duration}, which must not be negative. */
  public void advance(Duration duration) {
    if (duration == null || duration.isNegative()) {
      throw new IllegalArgumentException("duration must not be negative, was " + duration);
    }
    now.updateAndGet(t -> t.plus(duration));
  }

  @Override
  public Instant instant() {
    return Objects.requireNonNull(now.get()); // set in the constructor, never to null
  }

  @Override
  public ZoneId getZone() {
    return zone;
  }

  /**
   * Returns a view in another zone that shares this clock's time, so advancing either moves both.
   */
  @Override
  public Clock withZone(ZoneId zone) {
    return new FakeClock(now, Objects.requireNonNull(zone, "zone"));
  }

  @Override
  public String toString() {
    return "FakeClock[" + now.get() + "]";
  }
}
