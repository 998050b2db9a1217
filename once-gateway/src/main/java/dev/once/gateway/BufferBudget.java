package dev.once.gateway;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntPredicate;

/**
 * The bytes of request and response bodies held in memory by all exchanges together, and their cap.
 * An exchange reserves as its buffers grow, byte by arriving byte, and gives everything back when
 * it ends, so a burst of large or slow requests is refused (503) instead of exhausting the heap.
 *
 * <p>Request bodies may fill only {@link #REQUEST_SHARE} of the cap: the rest is kept for the
 * responses of requests already admitted, so that bodies still arriving (the cheap thing for a
 * client to send) cannot make an admitted request's small response stream, unrecorded, instead of
 * being stored for its retry.
 *
 * <p>One client (an address, or the client a trusted proxy names: {@link Forwarding#client}) may
 * hold at most {@code perClient} of request bodies, all its connections together, so one client
 * opening many connections cannot take the share from everyone else. (One connection serves one
 * exchange at a time, so it holds at most its route's request and response limits.)
 */
final class BufferBudget {

  /** The share of the cap request bodies may hold, in quarters. */
  static final int REQUEST_SHARE = 3;

  private final long cap;
  private final long requestCap;
  private final long perClient;
  private final AtomicLong used = new AtomicLong();

  /** Request-body bytes held per client; a client holding none has no entry. */
  private final Map<String, Long> byClient = new ConcurrentHashMap<>();

  BufferBudget(long cap, long perClient) {
    this.cap = cap;
    this.requestCap = cap / 4 * REQUEST_SHARE;
    this.perClient = perClient;
  }

  /**
   * Reserves {@code bytes} of a request body of {@code client}'s; false, reserving nothing, if over
   * the requests' share or the client's.
   */
  boolean reserveRequest(String client, long bytes) {
    boolean[] admitted = {false};
    byClient.compute(
        client,
        (k, held) -> {
          long now = held == null ? 0 : held;
          if (now + bytes > perClient) {
            return held;
          }
          admitted[0] = true;
          return now + bytes;
        });
    if (!admitted[0]) {
      return false;
    }
    if (!reserve(bytes, requestCap)) {
      releaseRequest(client, bytes);
      return false;
    }
    return true;
  }

  /** Gives back {@code bytes} of {@code client}'s request bodies, reserved with it. */
  void releaseRequest(String client, long bytes) {
    if (bytes > 0) {
      byClient.computeIfPresent(client, (k, held) -> held == bytes ? null : held - bytes);
    }
  }

  /** Reserves {@code bytes} of a response body; false, reserving nothing, if over the cap. */
  boolean reserveResponse(long bytes) {
    return reserve(bytes, cap);
  }

  private boolean reserve(long bytes, long limit) {
    long now;
    do {
      now = used.get();
      if (now + bytes > limit) {
        return false;
      }
    } while (!used.compareAndSet(now, now + bytes));
    return true;
  }

  /**
   * The capacity a buffer of {@code length} bytes grows to so that it holds {@code needed}: double,
   * up to {@code ceiling}, so the copies are few; only {@code needed} when {@code reserve} refuses
   * the growth to the double; -1 when it refuses that too. {@code reserve} is given the bytes the
   * buffer grows by.
   */
  static int grow(int length, int needed, int ceiling, IntPredicate reserve) {
    int doubled = (int) Math.max(needed, Math.min(ceiling, 2L * length));
    if (reserve.test(doubled - length)) {
      return doubled;
    }
    return needed < doubled && reserve.test(needed - length) ? needed : -1;
  }

  void release(long bytes) {
    used.addAndGet(-bytes);
  }

  long used() {
    return used.get();
  }
}
