package dev.once.client;

/** What one attempt's body became, decided from the status and headers before a byte was read. */
sealed interface Reply<T> {

  /**
   * The caller's body: the answer is final, unless it is a transient status on a call that cannot
   * retry.
   */
  record Body<T>(T value) implements Reply<T> {}

  /** A 409 or 422 problem on a keyed call, read whole so that its {@code type} decides. */
  record Problem<T>(String type, byte[] bytes) implements Reply<T> {}

  /** A transient status on a call that may retry: the body was read and thrown away. */
  record Discarded<T>() implements Reply<T> {}
}
