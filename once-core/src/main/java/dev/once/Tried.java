package dev.once;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How one call a {@link Step} made ended: with its value, or with what it threw (a stage's failure
 * without the wrappers {@code CompletableFuture} adds). The rules that read it handle each failure
 * they know and pass the rest on.
 */
final class Tried<A> {

  private final @Nullable A value;
  private final @Nullable Throwable failure;

  private Tried(@Nullable A value, @Nullable Throwable failure) {
    this.value = value;
    this.failure = failure;
  }

  static <A> Tried<A> value(@Nullable A value) {
    return new Tried<>(value, null);
  }

  static <A> Tried<A> failure(Throwable failure) {
    return new Tried<>(null, Objects.requireNonNull(failure, "failure"));
  }

  boolean failed() {
    return failure != null;
  }

  /** The value; only when the call did not fail. */
  @SuppressWarnings("NullAway") // a call that succeeded may answer null (a stage of Void)
  A value() {
    if (failure != null) {
      throw new IllegalStateException("the call failed", failure);
    }
    return value;
  }

  /** What the call threw; only when it failed. */
  Throwable failure() {
    if (failure == null) {
      throw new IllegalStateException("the call did not fail");
    }
    return failure;
  }
}
