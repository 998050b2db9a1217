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
   * How long one store call took, in nanoseconds; {@code operation} is the SPI method's name. Only
   * called for listeners other than {@link #NONE}.
   */
  default void onStoreCall(String operation, long nanos) {}
}
