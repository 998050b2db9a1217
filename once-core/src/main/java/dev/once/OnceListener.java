package dev.once;

/**
 * Receives {@link OnceEvent}s, synchronously on the thread that caused them: keep it fast and never
 * throw. Integrations (Micrometer, logging) implement it; core depends on no metrics library.
 */
@FunctionalInterface
public interface OnceListener {

  /** The listener that ignores everything; with it, no event is even created. */
  OnceListener NONE = event -> {};

  void onEvent(OnceEvent event);

  /**
   * Opens the observation of one store call, on the thread that makes it, just before the call
   * ({@link StoreCall} says when it is sent and ended); {@code operation} is the SPI method's name
   * ({@code claim}, {@code complete}, {@code claimBatch} …). This is the one place store calls are
   * observed: timings and tracing spans both hang off it. By default the call is timed, and its
   * duration reported to {@link #onStoreCall} when it ends. Only called for listeners other than
   * {@link #NONE}.
   */
  default StoreCall storeCall(String operation) {
    long start = System.nanoTime();
    return failure -> onStoreCall(operation, System.nanoTime() - start);
  }

  /**
   * How long one store call took, in nanoseconds, from its {@link #storeCall} to its end; {@code
   * operation} is the SPI method's name.
   */
  default void onStoreCall(String operation, long nanos) {}
}
