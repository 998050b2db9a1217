package dev.once.store.lincheck;

import org.jetbrains.kotlinx.lincheck.strategy.managed.modelchecking.ModelCheckingOptions;
import org.jetbrains.kotlinx.lincheck.strategy.stress.StressOptions;

/**
 * How hard the Lincheck tests try. The defaults keep both test classes within about a minute on a
 * quiet two-core machine; raise them for a deeper search, for example {@code
 * -Dlincheck.model.iterations=50 -Dlincheck.model.invocations=1000}.
 *
 * <p>Every scenario is three threads of three operations, after two and before one run alone:
 * small, because a linearisability bug in a store shows up with two or three operations on one key.
 */
final class LincheckBudget {

  private LincheckBudget() {}

  static StressOptions stress() {
    return new StressOptions()
        .iterations(Integer.getInteger("lincheck.stress.iterations", 20))
        .invocationsPerIteration(Integer.getInteger("lincheck.stress.invocations", 1_000))
        .threads(3)
        .actorsPerThread(3)
        .actorsBefore(2)
        .actorsAfter(1);
  }

  static ModelCheckingOptions modelChecking() {
    return new ModelCheckingOptions()
        .iterations(Integer.getInteger("lincheck.model.iterations", 4))
        .invocationsPerIteration(Integer.getInteger("lincheck.model.invocations", 80))
        .threads(3)
        .actorsPerThread(3)
        .actorsBefore(2)
        .actorsAfter(1);
  }
}
