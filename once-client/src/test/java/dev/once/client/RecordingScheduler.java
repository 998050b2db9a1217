package dev.once.client;

import dev.once.tck.FakeClock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ForkJoinPool;

/**
 * Records every wait the client asks for. It either really waits (delegating to the default
 * scheduler), or skips the wait by moving a {@link FakeClock} forward and running the task at once,
 * or keeps the task without running it, for the test to run or drop.
 */
final class RecordingScheduler implements Scheduler {

  final List<Duration> waits = new CopyOnWriteArrayList<>();
  final List<Runnable> held = new CopyOnWriteArrayList<>();
  private final Scheduler real;
  private final FakeClock clock;
  private final boolean hold;

  private RecordingScheduler(Scheduler real, FakeClock clock, boolean hold) {
    this.real = real;
    this.clock = clock;
    this.hold = hold;
  }

  static RecordingScheduler waiting() {
    return new RecordingScheduler(Scheduler.on(ForkJoinPool.commonPool()), null, false);
  }

  static RecordingScheduler skipping(FakeClock clock) {
    return new RecordingScheduler(null, clock, false);
  }

  static RecordingScheduler holding() {
    return new RecordingScheduler(null, null, true);
  }

  @Override
  public void schedule(Duration delay, Runnable task) {
    waits.add(delay);
    if (hold) {
      held.add(task);
    } else if (clock != null) {
      clock.advance(delay);
      ForkJoinPool.commonPool().execute(task);
    } else {
      real.schedule(delay, task);
    }
  }
}
