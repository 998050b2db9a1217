package dev.once.store.dynamodb;

import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * What a test does when a server it needs is missing: skip loudly, or fail when the build runs with
 * {@code -Donce.requireServices=true} (CI does), so that a missing server never passes silently.
 */
final class RequiredServices {

  private RequiredServices() {}

  static void assume(boolean available, String what) {
    if (available) {
      return;
    }
    if (Boolean.getBoolean("once.requireServices")) {
      Assertions.fail(what + " is not available, and once.requireServices=true");
    }
    System.err.println("WARNING: skipping: " + what + " is not available (set -Donce.requireServices=true to fail instead)");
    Assumptions.abort(what + " is not available");
  }
}
