package dev.once.gateway;

import dev.once.http.Problems;
import dev.once.http.StoredResponse;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * Reads a request body without holding a thread: it takes what has arrived, asks the hop to call
 * back when more does ({@code demand}), and returns. A slow client costs a buffer, never a thread.
 * The body must fit the route's limit (else 413), the gateway's {@link BufferBudget} (else 503) and
 * arrive within the deadline (else 408); the connection is closed after any of these, since the
 * rest of the body stays unread.
 *
 * <p>The buffer grows as bytes arrive, and is reserved from the budget as it grows: never on the
 * strength of a declared {@code Content-Length}. A head costs nothing, so a flood of heads that
 * declare large bodies and send none can neither exhaust the heap nor fill the budget against
 * honest requests; the declared length only stops the buffer from growing past it.
 */
final class BodyReader implements Runnable {

  private final ProxyExchange exchange;
  private final int max;

  /** The most the buffer may grow to: the route's limit, or the declared length if smaller. */
  private final int ceiling;

  private final Consumer<byte[]> then;
  private final AtomicBoolean done = new AtomicBoolean();
  private final Duration timeout;

  /**
   * Scheduled the first time the reader has to wait for bytes: a body that arrived with its head
   * (most small ones) is read without a timer set and cancelled.
   */
  private volatile Scheduler.@Nullable Task deadline;

  private byte[] buffer;
  private int size;

  private BodyReader(ProxyExchange exchange, int max, Duration timeout, Consumer<byte[]> then) {
    this.exchange = exchange;
    this.max = max;
    long declared = exchange.hop.declaredLength();
    this.ceiling = declared >= 0 ? (int) Math.min(max, declared) : max;
    this.then = then;
    this.buffer = new byte[0];
    this.timeout = timeout;
  }

  /**
   * Reads the whole body of {@code exchange}, then hands it to {@code then}; or answers the
   * problem.
   */
  static void read(ProxyExchange exchange, int max, Duration timeout, Consumer<byte[]> then) {
    if (exchange.hop.declaredLength() > max) {
      exchange.refuse(Problems.bodyTooLarge(max));
      return;
    }
    new BodyReader(exchange, max, timeout, then).run();
  }

  /** Reads what has arrived; called again when more does. */
  @Override
  public void run() {
    Content.Source body = exchange.hop.body();
    while (!done.get()) {
      Content.Chunk chunk = body.read();
      if (chunk == null) {
        if (deadline == null) {
          deadline =
              exchange
                  .hop
                  .scheduler()
                  .schedule(this::timedOut, timeout.toMillis(), TimeUnit.MILLISECONDS);
        }
        body.demand(this);
        return;
      }
      if (Content.Chunk.isFailure(chunk)) {
        chunk.release();
        if (finish()) {
          // A bad chunk or an early end: a problem of the client's (Jetty's own answer would be an
          // HTML 400), and the connection closes, as the rest of the body is no longer readable.
          exchange.closeAfter();
          exchange.answer(GatewayProblem.REQUEST_BODY_MALFORMED.response());
        }
        return;
      }
      boolean appended = append(chunk.getByteBuffer());
      boolean last = chunk.isLast();
      chunk.release();
      if (!appended) {
        return;
      }
      if (last) {
        if (finish()) {
          then.accept(size == buffer.length ? buffer : Arrays.copyOf(buffer, size));
        }
        return;
      }
    }
  }

  private boolean append(ByteBuffer bytes) {
    int n = bytes.remaining();
    if (size + n > max) {
      refuse(Problems.bodyTooLarge(max));
      return false;
    }
    if (size + n > buffer.length && !grow(size + n)) {
      return false;
    }
    bytes.get(buffer, size, n);
    size += n;
    return true;
  }

  /**
   * Makes room for {@code needed} bytes, reserving what the buffer grows by from the budget; else
   * answers 503. It doubles, so the copies are few, but never past the declared length, and takes
   * only what is needed when the budget has no room for the double.
   */
  private boolean grow(int needed) {
    int capacity = BufferBudget.grow(buffer.length, needed, ceiling, exchange::reserveRequest);
    if (capacity < 0) {
      refuse(GatewayProblem.OVERLOADED.response());
      return false;
    }
    buffer = Arrays.copyOf(buffer, capacity);
    return true;
  }

  /**
   * The client is too slow: answered at once, and the connection closed without reading on (a read
   * is still waiting for its bytes).
   */
  private void timedOut() {
    if (finish()) {
      exchange.closeAfter();
      exchange.answer(GatewayProblem.REQUEST_BODY_TIMEOUT.response());
    }
  }

  /** A body too large to hold: refused, and what is still coming drained within bounds. */
  private void refuse(StoredResponse problem) {
    if (finish()) {
      exchange.refuse(problem);
    }
  }

  /** True for the one caller that ends the read. */
  private boolean finish() {
    if (!done.compareAndSet(false, true)) {
      return false;
    }
    Scheduler.Task set = deadline;
    if (set != null) {
      set.cancel();
    }
    return true;
  }
}
