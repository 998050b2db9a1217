package dev.once;

import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * How a call, or some steps, ended: with a value, or with what was thrown (a stage's failure
 * without the wrappers {@code CompletableFuture} adds). The rules that read it handle each failure
 * they know and pass the rest on. It is also the last of the steps it ends: nothing is left to do.
 */
final class Tried<A> extends Step<A> {

  private final @Nullable A value;
  private final @Nullable Throwable failure;

  private Tried(@Nullable A value, @Nullable Throwable failure) {
    this.value = value;
    this.failure = failure;
  }

  /** The ends the engine's calls answer most (a fenced write's yes or no, a lease's recording). */
  private static final Tried<Boolean> TRUE = new Tried<>(true, null);

  private static final Tried<Boolean> FALSE = new Tried<>(false, null);
  private static final Tried<?>[] RECORDINGS = new Tried<?>[Recording.values().length];

  static {
    for (Recording r : Recording.values()) {
      RECORDINGS[r.ordinal()] = new Tried<>(r, null);
    }
  }

  @SuppressWarnings("unchecked") // a shared end holds a value of the type asked for
  static <A> Tried<A> value(@Nullable A value) {
    if (value instanceof Boolean b) {
      return (Tried<A>) (b ? TRUE : FALSE);
    }
    if (value instanceof Recording r) {
      return (Tried<A>) RECORDINGS[r.ordinal()];
    }
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

  /** This failure, as the end of steps of another type; only when it failed. */
  @SuppressWarnings("unchecked") // a failure holds no value, so it ends steps of any type
  <B> Tried<B> passOn() {
    if (failure == null) {
      throw new IllegalStateException("the call did not fail");
    }
    return (Tried<B>) this;
  }

  /** What the call threw; only when it failed. */
  Throwable failure() {
    if (failure == null) {
      throw new IllegalStateException("the call did not fail");
    }
    return failure;
  }
}
