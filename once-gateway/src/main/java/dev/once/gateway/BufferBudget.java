package dev.once.gateway;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The bytes of request and response bodies held in memory by all exchanges together, and their cap.
 * An exchange reserves before it buffers and gives everything back when it ends, so a burst of
 * large or slow requests is refused (503) instead of exhausting the heap.
 */
final class BufferBudget {

  private final long cap;
  private final AtomicLong used = new AtomicLong();

  BufferBudget(long cap) {
    this.cap = cap;
  }

  /** Reserves {@code bytes}; false, reserving nothing, if that would pass the cap. */
  boolean reserve(long bytes) {
    long now;
    do {
      now = used.get();
      if (now + bytes > cap) {
        return false;
      }
    } while (!used.compareAndSet(now, now + bytes));
    return true;
  }

  void release(long bytes) {
    used.addAndGet(-bytes);
  }

  long used() {
    return used.get();
  }
}
