package dev.once.client;

import java.time.Clock;
import java.time.Instant;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Time-ordered UUIDs, version 7 of RFC 9562: 48 bits of Unix time in milliseconds, the version, 12
 * bits of counter ({@code rand_a}), the variant and 62 random bits ({@code rand_b}).
 *
 * <p>Ids from one generator are strictly increasing, across all threads: the timestamp and the
 * counter are one 60-bit number in an {@link AtomicLong}, and each id takes {@code max(previous +
 * 1, now << 12)} with a compare-and-set (RFC 9562 §6.2, method 1, fixed-length dedicated counter).
 * No lock is taken. Within a millisecond the counter counts up from zero; when it passes 4095 it
 * carries into the timestamp, which then runs ahead of the clock until the clock catches up (RFC
 * 9562 §6.2 allows this). When the clock goes backwards the last timestamp is kept and the counter
 * keeps counting, so order is never broken. Ids from different processes are told apart by the 62
 * random bits.
 *
 * <p>The random bits come from {@link ThreadLocalRandom}, not a {@code SecureRandom}: an
 * idempotency key travels in clear in a header, is scoped to its owner by the server, and never
 * returns another request's result, so it needs uniqueness rather than secrecy (see {@code
 * docs/client.md}).
 */
public final class UuidV7 {

  private static final UuidV7 SHARED = new UuidV7(Clock.systemUTC());

  private static final int COUNTER_BITS = 12;
  private static final long TIMESTAMP_MASK = (1L << 48) - 1;
  private static final long VERSION = 0x7000L;
  private static final long VARIANT = 0x8000_0000_0000_0000L;
  private static final long RAND_B_MASK = 0x3FFF_FFFF_FFFF_FFFFL;

  private final Clock clock;
  // The last id's (timestamp << 12 | counter); 60 significant bits, so it cannot overflow a long.
  private final AtomicLong last = new AtomicLong();

  UuidV7(Clock clock) {
    this.clock = Objects.requireNonNull(clock, "clock");
  }

  /**
   * Returns a new UUIDv7 from the process-wide generator: larger than every one it returned before.
   */
  public static UUID next() {
    return SHARED.generate();
  }

  /**
   * Returns the Unix time in milliseconds that a UUIDv7 carries. Ids made while the counter ran
   * ahead of the clock (more than 4096 in one millisecond, or after the clock went back) carry a
   * slightly later time than the wall clock said.
   *
   * @throws IllegalArgumentException if {@code uuid} is not a version 7, RFC 9562 variant UUID
   */
  public static Instant timestamp(UUID uuid) {
    if (uuid.version() != 7 || uuid.variant() != 2) {
      throw new IllegalArgumentException(
          "uuid must be a version 7 UUID, was version "
              + uuid.version()
              + " variant "
              + uuid.variant());
    }
    return Instant.ofEpochMilli(uuid.getMostSignificantBits() >>> 16);
  }

  /** Returns the next id of this generator. */
  UUID generate() {
    long candidate = (clock.millis() & TIMESTAMP_MASK) << COUNTER_BITS;
    long stamp = last.accumulateAndGet(candidate, (previous, now) -> Math.max(previous + 1, now));
    long timestamp = (stamp >>> COUNTER_BITS) & TIMESTAMP_MASK;
    long counter = stamp & ((1L << COUNTER_BITS) - 1);
    long msb = (timestamp << 16) | VERSION | counter;
    long lsb = VARIANT | (ThreadLocalRandom.current().nextLong() & RAND_B_MASK);
    return new UUID(msb, lsb);
  }
}
