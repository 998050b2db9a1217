package dev.once;

import org.jspecify.annotations.Nullable;

/**
 * Thrown by an operation to say it failed deterministically: a retry would fail the same way, so
 * the failure is recorded and every retry gets it back instead of running again. Any other
 * exception is transient unless an {@link OutcomeClassifier} says otherwise.
 *
 * <p>Only the {@link #code()} and the message are recorded; they must not hold secrets.
 */
public class FinalFailure extends RuntimeException {

  private final String code;
  private final boolean replayed;

  /**
   * @param code a stable, machine-readable reason such as {@code insufficient-funds}
   * @param message a human-readable explanation
   */
  public FinalFailure(String code, @Nullable String message) {
    this(code, message, false);
  }

  FinalFailure(String code, @Nullable String message, boolean replayed) {
    super(message, null, false, !replayed);
    if (code == null || code.isEmpty()) {
      throw new IllegalArgumentException("a final failure needs a non-empty code");
    }
    this.code = code;
    this.replayed = replayed;
  }

  /** The stable reason. */
  public String code() {
    return code;
  }

  /** Whether this failure was read back from the store rather than thrown just now. */
  public boolean replayed() {
    return replayed;
  }
}
