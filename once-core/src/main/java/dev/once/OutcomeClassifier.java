package dev.once;

/**
 * Decides whether a result or an exception is a success, a final failure or a transient failure.
 * The default: every returned value is {@link Outcome#COMPLETED}; {@link FinalFailure} is {@link
 * Outcome#FAILED_FINAL}; any other exception is {@link Outcome#TRANSIENT}.
 *
 * @param <T> the result type
 */
public interface OutcomeClassifier<T> {

  /**
   * Classifies a returned value. HTTP (`HttpOutcomes`): 2xx/3xx completed, 5xx/408/423/425/429
   * transient, other 4xx final.
   */
  default Outcome classify(T result) {
    return Outcome.COMPLETED;
  }

  /**
   * Classifies an exception. Returning {@link Outcome#FAILED_FINAL} for anything but a {@link
   * FinalFailure} records the exception's class name as the code and its message.
   */
  default Outcome classifyError(Throwable error) {
    return error instanceof FinalFailure ? Outcome.FAILED_FINAL : Outcome.TRANSIENT;
  }

  /**
   * The outcome of an operation that threw {@code error}, under {@code classifier}: the one rule
   * every caller of the engine applies. An {@link Error} or an interrupt is transient whatever the
   * classifier says (a broken JVM or a cancelled worker is not the operation's verdict), and
   * "completed" for an exception means "record it": {@link Outcome#FAILED_FINAL}.
   *
   * @throws RuntimeException whatever the classifier throws; the caller must still finish its
   *     lease, and since the effect is unknown it abandons it rather than releasing it
   */
  static Outcome outcomeOfError(OutcomeClassifier<?> classifier, Throwable error) {
    if (error instanceof Error || error instanceof InterruptedException) {
      return Outcome.TRANSIENT;
    }
    Outcome outcome =
        java.util.Objects.requireNonNull(
            classifier.classifyError(error), "the classifier returned null for an error");
    return outcome == Outcome.COMPLETED ? Outcome.FAILED_FINAL : outcome;
  }

  /** The default classifier. */
  @SuppressWarnings("unchecked")
  static <T> OutcomeClassifier<T> defaults() {
    return (OutcomeClassifier<T>) DefaultClassifier.INSTANCE;
  }
}

final class DefaultClassifier implements OutcomeClassifier<Object> {
  static final DefaultClassifier INSTANCE = new DefaultClassifier();

  private DefaultClassifier() {}
}
