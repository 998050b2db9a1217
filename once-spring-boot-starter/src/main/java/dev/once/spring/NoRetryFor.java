package dev.once.spring;

import dev.once.FinalFailure;
import dev.once.Outcome;
import dev.once.OutcomeClassifier;
import java.lang.reflect.Constructor;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The engine's classifier for an {@link Idempotent} method: a {@link FinalFailure}, or an exception
 * of one of the {@code noRetryFor} types, is a final failure (recorded and replayed); any other
 * exception is transient (the key is released). Every returned value is a success. The engine
 * applies it with its own rules ({@link OutcomeClassifier#outcomeOfError}: an {@link Error} is
 * always transient).
 *
 * @param types the {@code noRetryFor} types
 */
record NoRetryFor(List<Class<? extends Throwable>> types) implements OutcomeClassifier<Object> {

  @Override
  public Outcome classifyError(Throwable error) {
    if (error instanceof FinalFailure) {
      return Outcome.FAILED_FINAL;
    }
    for (Class<? extends Throwable> type : types) {
      if (type.isInstance(error)) {
        return Outcome.FAILED_FINAL;
      }
    }
    return Outcome.TRANSIENT;
  }

  /**
   * What a recorded failure is thrown as on replay: the engine records a {@code noRetryFor}
   * exception as its class name and message, so an exception of that very class (one of the {@code
   * noRetryFor} types, never any class a record names) is made again if it has a public {@code
   * (String)} constructor; otherwise the {@link FinalFailure} itself, with the class name as its
   * {@link FinalFailure#code()}.
   */
  Throwable replayed(FinalFailure failure) {
    for (Class<? extends Throwable> type : types) {
      if (type.getName().equals(failure.code())) {
        Throwable rebuilt = construct(type, failure.getMessage());
        if (rebuilt != null) {
          return rebuilt;
        }
      }
    }
    return failure;
  }

  private static @Nullable Throwable construct(
      Class<? extends Throwable> type, @Nullable String message) {
    try {
      Constructor<? extends Throwable> constructor = type.getConstructor(String.class);
      return constructor.newInstance(message);
    } catch (ReflectiveOperationException | RuntimeException e) {
      return null;
    }
  }
}
