package dev.once;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;

/**
 * The failure a stage completed with, without the wrappers {@code CompletableFuture} adds on the
 * way.
 */
final class Causes {

  private Causes() {}

  static Throwable of(Throwable failure) {
    Throwable t = failure;
    while ((t instanceof CompletionException || t instanceof ExecutionException)
        && t.getCause() != null) {
      t = t.getCause();
    }
    return t;
  }
}
