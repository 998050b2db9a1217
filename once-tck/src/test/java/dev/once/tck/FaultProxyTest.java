package dev.once.tck;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The proxy in front of a line server that answers each line it handled with "done: line". */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class FaultProxyTest {

  private ServerSocket upstream;
  private final AtomicInteger handled = new AtomicInteger();
  private FaultProxy proxy;

  @BeforeEach
  void start() throws IOException {
    upstream = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor =
        new Thread(
            () -> {
              while (true) {
                try {
                  Socket s = upstream.accept();
                  Thread t = new Thread(() -> serve(s), "line-server");
                  t.setDaemon(true);
                  t.start();
                } catch (IOException e) {
                  return;
                }
              }
            },
            "line-server-accept");
    acceptor.setDaemon(true);
    acceptor.start();
    proxy = FaultProxy.to(upstream.getLocalPort());
  }

  private void serve(Socket s) {
    try (s;
        BufferedReader in =
            new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8));
        OutputStream out = s.getOutputStream()) {
      for (String line; (line = in.readLine()) != null; ) {
        handled.incrementAndGet();
        out.write(("done: " + line + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
      }
    } catch (IOException e) {
      // The proxy hung up.
    }
  }

  @AfterEach
  void stop() throws IOException {
    proxy.close();
    upstream.close();
  }

  /**
   * Sends a line through the proxy and returns the answer, or null if the connection ended without
   * one.
   */
  private String ask(Socket s, String line) throws IOException {
    PrintWriter out = new PrintWriter(s.getOutputStream(), true, StandardCharsets.UTF_8);
    out.println(line);
    try {
      return new BufferedReader(new InputStreamReader(s.getInputStream(), StandardCharsets.UTF_8))
          .readLine();
    } catch (IOException e) {
      return null; // reset
    }
  }

  private Socket connect() throws IOException {
    Socket s = new Socket(InetAddress.getLoopbackAddress(), proxy.port());
    s.setSoTimeout(20_000);
    return s;
  }

  @Test
  void forwardsBothWays() throws IOException {
    try (Socket s = connect()) {
      assertThat(ask(s, "a")).isEqualTo("done: a");
    }
    assertThat(proxy.acceptedConnections()).isEqualTo(1);
  }

  @Test
  void aDroppedAnswerWasHandledButNeverArrives() throws IOException {
    proxy.dropResponses(1);
    try (Socket s = connect()) {
      assertThat(ask(s, "a")).isNull();
    }
    assertThat(handled.get()).isEqualTo(1);
    assertThat(proxy.droppedResponses()).isEqualTo(1);
    try (Socket s = connect()) {
      assertThat(ask(s, "b")).isEqualTo("done: b");
    }
  }

  @Test
  void aDelayedAnswerArrivesLater() throws IOException {
    proxy.delayResponses(1, Duration.ofMillis(200));
    try (Socket s = connect()) {
      assertThat(ask(s, "a")).isEqualTo("done: a");
      assertThat(ask(s, "b")).isEqualTo("done: b");
    }
  }

  @Test
  void aCutClosesConnectionsAndRefusesNewOnesUntilRestored() throws IOException {
    try (Socket s = connect()) {
      assertThat(ask(s, "a")).isEqualTo("done: a");
      proxy.cut();
      assertThat(ask(s, "b")).isNull();
    }
    try (Socket s = connect()) {
      assertThat(ask(s, "c")).isNull();
    }
    proxy.restore();
    try (Socket s = connect()) {
      assertThat(ask(s, "d")).isEqualTo("done: d");
    }
  }

  @Test
  void badArgumentsAreRefused() {
    assertThatThrownBy(() -> FaultProxy.to(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("targetPort");
    assertThatThrownBy(() -> proxy.dropResponses(-1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("n ");
    assertThatThrownBy(() -> proxy.delayResponses(1, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("delay");
    assertThatThrownBy(() -> proxy.delayResponses(1, Duration.ofMinutes(6)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("delay");
  }
}
