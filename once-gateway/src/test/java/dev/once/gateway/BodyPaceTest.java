package dev.once.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The pace of a streamed request body: what counts against the client, and what does not. A cut is
 * awaited, never expected by a fixed time, and checked not to come before the client's allowance: a
 * loaded machine can only make the scheduler late.
 */
@Timeout(30)
class BodyPaceTest {

  private static final long GRACE = TimeUnit.MILLISECONDS.toNanos(200);

  private final ScheduledExecutorScheduler scheduler = new ScheduledExecutorScheduler();
  private final AtomicInteger cut = new AtomicInteger();
  private final CountDownLatch wasCut = new CountDownLatch(1);

  @BeforeEach
  void start() throws Exception {
    scheduler.start();
  }

  @AfterEach
  void stop() throws Exception {
    scheduler.stop();
  }

  private BodyPace pace(long bytesPerSecond) {
    return new BodyPace(
        scheduler,
        GRACE,
        bytesPerSecond,
        () -> {
          cut.incrementAndGet();
          wasCut.countDown();
        });
  }

  /** Waits for the cut and returns how long after {@code since} it came. */
  private Duration cutAfter(long since) throws InterruptedException {
    assertThat(wasCut.await(10, TimeUnit.SECONDS)).as("cut").isTrue();
    return Duration.ofNanos(System.nanoTime() - since);
  }

  @Test
  void aClientThatSendsNothingIsCutOnceAfterTheGrace() throws Exception {
    BodyPace pace = pace(1024);
    long start = System.nanoTime();
    pace.demanding(() -> {});

    assertThat(cutAfter(start)).isGreaterThanOrEqualTo(Duration.ofNanos(GRACE));
    Thread.sleep(300);
    assertThat(cut).hasValue(1);
  }

  @Test
  void timeSpentWaitingForTheUpstreamIsNotTheClients() throws Exception {
    BodyPace pace = pace(1024);
    // Ten rounds of: the client's bytes come at once, then the upstream takes 100 ms to ask for
    // more. 1 s in all, five times the grace, none of it the client's.
    for (int i = 0; i < 10; i++) {
      CountDownLatch arrived = new CountDownLatch(1);
      Runnable callback = pace.demanding(arrived::countDown);
      pace.read(1);
      callback.run();
      assertThat(arrived.await(1, TimeUnit.SECONDS)).isTrue();
      Thread.sleep(100);
    }

    assertThat(cut).hasValue(0);
  }

  @Test
  void bytesSentBuyTimeAtTheMinimumRate() throws Exception {
    BodyPace pace = pace(1024);
    pace.read(1024); // one more second
    long start = System.nanoTime();
    pace.demanding(() -> {});

    assertThat(cutAfter(start)).isGreaterThanOrEqualTo(Duration.ofNanos(GRACE).plusSeconds(1));
  }

  @Test
  void anEnormousCountOfBytesNeitherOverflowsNorCuts() throws Exception {
    BodyPace pace = pace(1);
    pace.read(Long.MAX_VALUE / 2);
    pace.read(Long.MAX_VALUE / 2);
    pace.demanding(() -> {});

    Thread.sleep(400);

    assertThat(cut).hasValue(0);
  }

  @Test
  void aStoppedPaceNeverCuts() throws Exception {
    BodyPace pace = pace(1024);
    pace.demanding(() -> {});
    pace.stop();

    Thread.sleep(500);

    assertThat(cut).hasValue(0);
  }
}
