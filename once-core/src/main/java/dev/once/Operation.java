package dev.once;

/**
 * The work to do at most once per (scope, key). It runs only while its caller holds the lease.
 *
 * @param <T> what it produces
 */
@FunctionalInterface
public interface Operation<T> {

  /**
   * Does the work. Return a value (classified by the {@link OutcomeClassifier}), throw {@link
   * FinalFailure} for a deterministic failure, or throw anything else for a transient one.
   */
  T run(ExecutionContext context) throws Exception;
}
