package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Clients that send their bodies a byte at a time hold no thread: the proxy and /health still
 * answer.
 */
@Timeout(120)
class SlowClientTest {

  static final int SLOW_CLIENTS = 300;

  @Test
  void threeHundredTricklingClientsStopNeitherTheProxyNorHealth() throws Exception {
    List<Socket> slow = new ArrayList<>();
    try (TestGateway gw = TestGateway.start("--request-body-timeout", "60s")) {
      try {
        // Warm: the first requests start the threads any request needs (loops, store, timers).
        gw.client.postJson("/payments/warm", key(), "{}");
        double threadsBefore = liveThreads(gw);
        for (int i = 0; i < SLOW_CLIENTS; i++) {
          Socket s = new Socket("127.0.0.1", gw.gateway.port());
          slow.add(s);
          s.getOutputStream().write(Client.rawPost("/payments/trickle-" + i, key(), 100, "{"));
        }
        trickle(slow);

        long start = System.nanoTime();
        HttpResponse<String> normal = gw.client.postJson("/payments/normal", key(), "{}");
        HttpResponse<String> health = gw.management().get("/health");
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        trickle(slow);
        double threadsAdded = liveThreads(gw) - threadsBefore;
        // Jetty's pool may keep threads it made; whether one is held shows as busy. Netty's loops
        // are fixed in number, so a held request could only show as a thread added.
        double busy = TestCore.netty() ? threadsAdded : fewestBusyThreads(gw);
        System.out.printf(
            "%d trickling clients: normal request and /health in %d ms, %.0f threads added,"
                + " %.0f busy proxy threads%n",
            SLOW_CLIENTS, took.toMillis(), threadsAdded, busy);

        assertThat(normal.statusCode()).isEqualTo(201);
        assertThat(health.statusCode()).isEqualTo(200);
        assertThat(took).isLessThan(Duration.ofSeconds(5));
        assertThat(busy)
            .as("threads held while %d clients trickle", SLOW_CLIENTS)
            .isLessThan(SLOW_CLIENTS / 10);
        assertThat(gw.upstream.runs("/payments/trickle-0")).isZero();
      } finally {
        for (Socket s : slow) {
          s.close();
        }
      }
    }
  }

  /**
   * The fewest proxy threads seen busy over a few samples. One sample right after a trickle can
   * catch threads that are still reading the byte that just arrived, and that count depends on the
   * scheduler; a thread held by a trickling request stays busy in every sample, so the fewest is
   * what says whether requests hold threads.
   */
  private static double fewestBusyThreads(TestGateway gw) throws Exception {
    double fewest = Double.MAX_VALUE;
    for (int sample = 0; sample < 20 && fewest >= SLOW_CLIENTS / 10; sample++) {
      if (sample > 0) {
        Thread.sleep(50);
      }
      fewest = Math.min(fewest, busyThreads(gw.management().get("/metrics").body()));
    }
    return fewest;
  }

  /** The JVM's live threads, as {@code /metrics} shows them. */
  private static double liveThreads(TestGateway gw) throws Exception {
    return gw.management()
        .get("/metrics")
        .body()
        .lines()
        .filter(l -> l.startsWith("jvm_threads_live_threads"))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .findFirst()
        .orElseThrow(() -> new AssertionError("no jvm_threads_live_threads in /metrics"));
  }

  /**
   * Jetty's busy threads, as {@code /metrics} shows them (the management pool is not among them).
   */
  private static double busyThreads(String metrics) {
    return metrics
        .lines()
        .filter(l -> l.startsWith("jetty_threads_busy"))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }

  /** One more byte from every slow client. */
  private static void trickle(List<Socket> slow) throws IOException {
    for (Socket s : slow) {
      s.getOutputStream().write(' ');
    }
  }
}
