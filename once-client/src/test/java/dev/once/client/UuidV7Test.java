package dev.once.client;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

class UuidV7Test {

  private static final long T0 = Instant.parse("2030-01-01T00:00:00Z").toEpochMilli();

  @Test
  void carriesVersionSevenTheRfcVariantAndTheTime() {
    UuidV7 generator = new UuidV7(new SettableClock(T0));
    UUID id = generator.generate();

    assertThat(id.version()).isEqualTo(7);
    assertThat(id.variant()).isEqualTo(2);
    assertThat(UuidV7.timestamp(id)).isEqualTo(Instant.ofEpochMilli(T0));
    // The 48-bit big-endian timestamp is the first 12 hex digits of the text form.
    assertThat(id.toString().replace("-", "").substring(0, 12))
        .isEqualTo(String.format("%012x", T0));
    assertThat(id.toString().charAt(14)).isEqualTo('7');
    assertThat(id.toString().charAt(19)).isIn('8', '9', 'a', 'b');
  }

  @Test
  void theSharedGeneratorFollowsTheSystemClock() {
    long before = System.currentTimeMillis();
    UUID id = UuidV7.next();
    long after = System.currentTimeMillis();
    assertThat(UuidV7.timestamp(id).toEpochMilli()).isBetween(before, after);
  }

  @Test
  void withinOneMillisecondTheCounterCountsUp() {
    UuidV7 generator = new UuidV7(new SettableClock(T0));
    UUID a = generator.generate();
    UUID b = generator.generate();

    assertThat(b.getMostSignificantBits() - a.getMostSignificantBits()).isEqualTo(1);
    assertThat(b).isGreaterThan(a);
  }

  @Test
  void aNewMillisecondStartsTheCounterAgain() {
    SettableClock clock = new SettableClock(T0);
    UuidV7 generator = new UuidV7(clock);
    generator.generate();
    generator.generate();
    clock.set(T0 + 1);

    UUID id = generator.generate();

    assertThat(UuidV7.timestamp(id)).isEqualTo(Instant.ofEpochMilli(T0 + 1));
    assertThat(id.getMostSignificantBits() & 0xFFF).isZero();
  }

  @Test
  void aFullCounterCarriesIntoTheTimestampAndStaysOrdered() {
    SettableClock clock = new SettableClock(T0);
    UuidV7 generator = new UuidV7(clock);
    UUID previous = generator.generate();
    for (int i = 1; i < 4096 + 10; i++) {
      UUID id = generator.generate();
      assertThat(id).isGreaterThan(previous);
      assertThat(id.version()).isEqualTo(7);
      previous = id;
    }
    // 4106 ids in one millisecond: the last ones run one millisecond ahead of the clock.
    assertThat(UuidV7.timestamp(previous)).isEqualTo(Instant.ofEpochMilli(T0 + 1));
    // When the clock reaches that millisecond, order still holds.
    clock.set(T0 + 1);
    assertThat(generator.generate()).isGreaterThan(previous);
  }

  @Test
  void aClockThatGoesBackwardsNeverBreaksTheOrder() {
    SettableClock clock = new SettableClock(T0);
    UuidV7 generator = new UuidV7(clock);
    UUID before = generator.generate();
    clock.set(T0 - 60_000);

    UUID after = generator.generate();

    assertThat(after).isGreaterThan(before);
    assertThat(UuidV7.timestamp(after)).isEqualTo(Instant.ofEpochMilli(T0));
    // Once the clock passes the old time again, ids follow it.
    clock.set(T0 + 5);
    assertThat(UuidV7.timestamp(generator.generate())).isEqualTo(Instant.ofEpochMilli(T0 + 5));
  }

  @Test
  void timestampRejectsOtherVersions() {
    assertThatThrownBy(() -> UuidV7.timestamp(UUID.randomUUID()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("version 4");
  }

  @Test
  @Timeout(value = 60, unit = TimeUnit.SECONDS)
  void aMillionIdsFromFourThreadsAreUniqueAndIncreasingPerThread() throws Exception {
    UuidV7 generator = new UuidV7(java.time.Clock.systemUTC());
    int threads = 4;
    int perThread = 250_000;
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<UUID[]>> results = new ArrayList<>();
      for (int t = 0; t < threads; t++) {
        results.add(
            pool.submit(
                () -> {
                  start.await();
                  UUID[] ids = new UUID[perThread];
                  for (int i = 0; i < perThread; i++) {
                    ids[i] = generator.generate();
                  }
                  return ids;
                }));
      }
      start.countDown();
      UUID[] all = new UUID[threads * perThread];
      int at = 0;
      for (Future<UUID[]> f : results) {
        UUID[] ids = f.get(60, TimeUnit.SECONDS);
        UUID[] sorted = ids.clone();
        Arrays.sort(sorted);
        // Sorting changes nothing: generation order is UUID order within each thread.
        assertThat(Arrays.equals(sorted, ids)).as("sorted order is generation order").isTrue();
        for (int i = 1; i < ids.length; i++) {
          if (ids[i].compareTo(ids[i - 1]) <= 0) {
            throw new AssertionError(
                "not increasing at " + i + ": " + ids[i - 1] + " then " + ids[i]);
          }
        }
        System.arraycopy(ids, 0, all, at, ids.length);
        at += ids.length;
      }
      Arrays.sort(all);
      for (int i = 1; i < all.length; i++) {
        if (all[i].equals(all[i - 1])) {
          throw new AssertionError("duplicate " + all[i]);
        }
        // Not only the whole id: timestamp and counter alone are unique within one generator.
        if (all[i].getMostSignificantBits() == all[i - 1].getMostSignificantBits()) {
          throw new AssertionError("duplicate timestamp and counter " + all[i]);
        }
      }
    } finally {
      pool.shutdownNow();
    }
  }
}
