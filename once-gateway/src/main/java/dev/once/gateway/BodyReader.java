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

/**
 * Reads a request body without holding a thread: it takes what has arrived, asks Jetty to call back
 * when more does ({@code demand}), and returns. A slow client costs a buffer, never a thread. The
 * body must fit the route's limit (else 413), the gateway's {@link BufferBudget} (else 503) and
 * arrive within the deadline (else 408); the connection is closed after any of these, since the
 * rest of the body stays unread.
 */
final class BodyReader implements Runnable {

  private final ProxyExchange exchange;
  private final int max;
  private final Consumer<byte[]> then;
  private final AtomicBoolean done = new AtomicBoolean();
  private final Scheduler.Task deadline;
  private byte[] buffer;
  private int size;

  private BodyReader(ProxyExchange exchange, int max, Duration timeout, Consumer<byte[]> then) {
    this.exchange = exchange;
    this.max = max;
    this.then = then;
    this.buffer = new byte[0];
    Scheduler scheduler = exchange.request.getComponents().getScheduler();
    this.deadline = scheduler.schedule(this::timedOut, timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Reads the whole body of {@code exchange}, then hands it to {@code then}; or answers the
   * problem.
   */
  static void read(ProxyExchange exchange, int max, Duration timeout, Consumer<byte[]> then) {
    if (exchange.request.getLength() > max) {
      exchange.refuse(Problems.bodyTooLarge(max));
      return;
    }
    BodyReader reader = new BodyReader(exchange, max, timeout, then);
    // A declared length is reserved at once: one allocation, and the budget counts what it holds.
    if (reader.grow((int) Math.max(exchange.request.getLength(), 0))) {
      reader.run();
    }
  }

  /** Reads what has arrived; called again by Jetty when more does. */
  @Override
  public void run() {
    while (!done.get()) {
      Content.Chunk chunk = exchange.request.read();
      if (chunk == null) {
        exchange.request.demand(this);
        return;
      }
      if (Content.Chunk.isFailure(chunk)) {
        chunk.release();
        if (finish()) {
          exchange.complete(chunk.getFailure());
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
    if (size + n > buffer.length && !grow(Math.min(max, Math.max(size + n, buffer.length * 2)))) {
      return false;
    }
    bytes.get(buffer, size, n);
    size += n;
    return true;
  }

  /** Makes the buffer {@code capacity} long, within the budget; else answers 503. */
  private boolean grow(int capacity) {
    if (capacity <= buffer.length) {
      return true;
    }
    if (!exchange.reserve(capacity - buffer.length)) {
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
      exchange.response.getHeaders().put("Connection", "close");
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
    deadline.cancel();
    return true;
  }
}
