package dev.once.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/** Reports a store that is down at startup as the store and its address, not a stack trace. */
class StoreUnreachableFailureAnalyzer
    extends AbstractFailureAnalyzer<OnceStoreUnreachableException> {

  @Override
  protected FailureAnalysis analyze(Throwable rootFailure, OnceStoreUnreachableException cause) {
    return new FailureAnalysis(cause.getMessage(), cause.action(), cause);
  }
}
