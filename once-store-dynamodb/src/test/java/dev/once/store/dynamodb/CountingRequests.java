package dev.once.store.dynamodb;

import java.util.concurrent.atomic.AtomicInteger;
import software.amazon.awssdk.core.interceptor.Context;
import software.amazon.awssdk.core.interceptor.ExecutionAttributes;
import software.amazon.awssdk.core.interceptor.ExecutionInterceptor;

/** Counts the requests a client sends (each attempt the SDK makes is one). */
final class CountingRequests implements ExecutionInterceptor {

  private final AtomicInteger sent = new AtomicInteger();

  /** The requests sent since the last {@link #reset()}. */
  int sent() {
    return sent.get();
  }

  void reset() {
    sent.set(0);
  }

  @Override
  public void beforeTransmission(
      Context.BeforeTransmission context, ExecutionAttributes attributes) {
    sent.incrementAndGet();
  }
}
