package dev.once.spring;

import java.net.InetSocketAddress;
import java.net.Socket;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * The PostgreSQL server tests run against (127.0.0.1:5432, database {@code test}, user postgres).
 * A test that needs it calls {@link #require()}: when it is unreachable the test is skipped loudly
 * (a WARNING line and an assumption), or fails when the build runs with
 * {@code -Donce.requireServices=true}, as CI does.
 */
final class PostgresService {

  static final String URL = "jdbc:postgresql://127.0.0.1:5432/test";

  private PostgresService() {}

  static void require() {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress("127.0.0.1", 5432), 1_000);
      return;
    } catch (java.io.IOException e) {
      String message = "PostgreSQL is not reachable at 127.0.0.1:5432";
      if (Boolean.getBoolean("once.requireServices")) {
        Assertions.fail(message + ", and once.requireServices=true demands it");
      }
      System.err.println("WARNING: " + message + "; skipping tests that need it (set -Donce.requireServices=true to fail instead)");
      Assumptions.abort(message);
    }
  }
}
