package dev.once.tck;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * What a test does when a server it needs is missing: it is skipped loudly (a WARNING line on
 * standard error and a JUnit assumption naming the server), or fails when the build runs with
 * {@code -Donce.requireServices=true}, as CI does, so a missing server never passes silently.
 */
public final class RequiredServices {

  private RequiredServices() {}

  /** Whether this build demands every server (CI). */
  public static boolean required() {
    return Boolean.getBoolean("once.requireServices");
  }

  /**
   * Skips or fails the test unless a TCP connection to {@code host:port} succeeds within a second.
   */
  public static void requireReachable(String name, String host, int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), 1_000);
    } catch (IOException e) {
      assume(false, name + " at " + host + ":" + port + " (" + e.getMessage() + ")");
    }
  }

  /** Skips or fails the test unless {@code available}; {@code what} names the missing service. */
  public static void assume(boolean available, String what) {
    if (available) {
      return;
    }
    if (required()) {
      Assertions.fail(what + " is not available, and once.requireServices=true demands it");
    }
    System.err.println(
        "WARNING: skipping: "
            + what
            + " is not available"
            + " (set -Donce.requireServices=true to fail instead)");
    Assumptions.abort(what + " is not available");
  }
}
