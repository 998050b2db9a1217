package dev.once.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports an {@link InvalidOncePropertyException} at startup as a property to fix, not a stack
 * trace.
 */
class InvalidOncePropertyFailureAnalyzer
    extends AbstractFailureAnalyzer<InvalidOncePropertyException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, InvalidOncePropertyException cause) {
    return new FailureAnalysis(
        cause.getMessage(),
        "Fix "
            + cause.getProperty()
            + " (the options and their limits are listed in docs/spring-boot.md).",
        cause);
  }
}
