package dev.once.gateway;

import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Where the access lines go: standard output, written in batches by a thread of their own, as
 * nginx's {@code access_log … buffer= flush=} writes them.
 *
 * <p><b>Why not one logger call per request.</b> A line through the console logger is a formatted
 * date, a lock and a {@code write} system call on the thread that served the request: measured, the
 * access log cost the plain proxy path 16–20 % more CPU per request (the write alone half of that).
 * Here a request only appends its line to a buffer under a short lock; the writer takes everything
 * gathered every {@link #FLUSH_EVERY} (sooner once {@link #FLUSH_CHARS} are waiting) and writes it
 * with one call, so under load a system call carries hundreds of lines.
 *
 * <p><b>Never in a request's way.</b> If standard output does not take lines as fast as they come
 * (a stopped reader on a pipe), at most {@link #MOST_PENDING_CHARS} wait; past that, lines are
 * dropped and counted ({@code once_gateway_access_lines_dropped_total} on {@code /metrics}, which a
 * stuck output cannot hide), and the count is logged once the output moves again. A request never
 * waits for the output. Lines still waiting are written when the gateway stops; a process killed
 * outright loses at most the last {@link #FLUSH_EVERY} of them, as any buffered access log does.
 */
final class AccessLines {

  private static final Logger log = LoggerFactory.getLogger(AccessLines.class);

  /** How long a line may wait for the writer when few come. */
  static final Duration FLUSH_EVERY = Duration.ofMillis(100);

  /** Waiting characters that make the writer go at once. */
  static final int FLUSH_CHARS = 32 * 1024;

  /** Waiting characters past which lines are dropped: about 8,000 lines. */
  static final int MOST_PENDING_CHARS = 1024 * 1024;

  /** How long stopping waits for the last lines to be written. */
  private static final long CLOSE_WAIT_MILLIS = 2_000;

  private final Supplier<OutputStream> out;
  private final long flushNanos;
  private final Thread writer;

  private final ReentrantLock lock = new ReentrantLock();
  private final Condition due = lock.newCondition();

  /** Lines waiting for the writer; guarded by {@link #lock}. */
  private StringBuilder pending = new StringBuilder(FLUSH_CHARS * 2);

  /**
   * Lines dropped since the start: for {@code /metrics}, where a stuck output cannot hide them as
   * it hides its own warning, and for the writer's warning, of those since its last one ({@link
   * #warned}). Counted under {@link #lock}, read without it.
   */
  private final AtomicLong dropped = new AtomicLong();

  /** The writer's own: how many of {@link #dropped} it has warned of. */
  private long warned;

  /** Guarded by {@link #lock}. */
  private boolean closed;

  /** The writer's own: the buffer it hands back once written. */
  private StringBuilder spare = new StringBuilder(FLUSH_CHARS * 2);

  /** Lines for standard output, looked up at every write so that a replaced one is followed. */
  static AccessLines toStandardOutput() {
    return new AccessLines(() -> System.out, FLUSH_EVERY);
  }

  AccessLines(Supplier<OutputStream> out, Duration flushEvery) {
    this.out = out;
    this.flushNanos = flushEvery.toNanos();
    this.writer = new Thread(this::write, "once-access-log");
    writer.setDaemon(true);
  }

  /** Starts the writer; lines added before wait for it. */
  void start() {
    writer.start();
  }

  /** Adds one line (without its line break); never waits for the output. */
  void add(CharSequence line) {
    lock.lock();
    try {
      if (closed || pending.length() + line.length() >= MOST_PENDING_CHARS) {
        dropped.incrementAndGet();
        return;
      }
      boolean first = pending.isEmpty();
      pending.append(line).append('\n');
      // The first line starts the writer's interval (it waits without one while there are none);
      // a full buffer ends it.
      if (first || pending.length() >= FLUSH_CHARS) {
        due.signal();
      }
    } finally {
      lock.unlock();
    }
  }

  /**
   * Writes the lines still waiting and stops the writer; lines added later are dropped. Returns
   * once they are written, or after {@value #CLOSE_WAIT_MILLIS} ms if the output does not take
   * them.
   */
  void close() {
    lock.lock();
    try {
      closed = true;
      due.signal();
    } finally {
      lock.unlock();
    }
    try {
      writer.join(CLOSE_WAIT_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The writer thread: a batch at a time until closed and every line is written. */
  private void write() {
    while (true) {
      StringBuilder batch;
      long droppedNow;
      boolean last;
      lock.lock();
      try {
        awaitBatch();
        batch = pending;
        pending = spare;
        droppedNow = dropped.get();
        last = closed;
      } finally {
        lock.unlock();
      }
      writeOut(batch);
      if (droppedNow > warned) {
        log.warn(
            "{} access lines dropped: standard output did not take them as fast as they came",
            droppedNow - warned);
        warned = droppedNow;
      }
      batch.setLength(0);
      // A burst may have grown it far; the next ones start small again.
      spare = batch.capacity() > 4 * FLUSH_CHARS ? new StringBuilder(FLUSH_CHARS * 2) : batch;
      if (last) {
        return;
      }
    }
  }

  /**
   * Waits, holding {@link #lock}, until a batch is due: enough lines, a line old enough, or close.
   */
  private void awaitBatch() {
    while (pending.isEmpty() && !closed) {
      due.awaitUninterruptibly();
    }
    long left = flushNanos;
    while (pending.length() < FLUSH_CHARS && !closed && left > 0) {
      try {
        left = due.awaitNanos(left);
      } catch (InterruptedException e) {
        // Nobody interrupts this thread; if someone does, the batch simply goes now.
        return;
      }
    }
  }

  private void writeOut(StringBuilder batch) {
    if (batch.isEmpty()) {
      return;
    }
    try {
      OutputStream target = out.get();
      byte[] bytes = batch.toString().getBytes(StandardCharsets.UTF_8);
      target.write(bytes, 0, bytes.length);
      target.flush();
    } catch (Exception | Error e) {
      // The writer must outlive any one failed write, or every later line would be dropped.
      log.warn("access lines could not be written ({}); they are lost", Logs.failure(e));
    }
  }

  /** Lines dropped since the start: never taken by the output, or added after close. */
  long droppedTotal() {
    return dropped.get();
  }

  /** For tests: whether the writer thread still runs. */
  boolean writing() {
    return writer.isAlive();
  }
}
