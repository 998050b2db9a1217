package dev.once.gateway;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import org.junit.jupiter.api.Assumptions;

/**
 * Tests that need a server call {@link #require}: without the server they are skipped, loudly, unless
 * {@code -Donce.requireServices=true} (CI), where they fail.
 */
final class RequiredServices {

  private RequiredServices() {}

  static void require(String name, String host, int port) {
    try (Socket s = new Socket()) {
      s.connect(new InetSocketAddress(host, port), 1000);
      return;
    } catch (IOException e) {
      String message = name + " is not reachable at " + host + ":" + port + " (" + e.getMessage() + ")";
      if (Boolean.getBoolean("once.requireServices")) {
        throw new AssertionError(message + "; once.requireServices=true, so this is a failure", e);
      }
      System.err.println("SKIPPED LOUDLY: " + message + "; run with -Donce.requireServices=true to fail instead");
      Assumptions.abort(message);
    }
  }
}
