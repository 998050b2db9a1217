package dev.once.bench.http;

import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A closed-loop load generator on loopback: each connection is a kept-alive socket that sends one
 * POST, reads the whole response, and sends the next, with a new {@code Idempotency-Key} every time
 * (the filter's full path: claim, handler, record). Bounded both in time and in count. Plain
 * sockets rather than an HTTP client library, so the client costs as little CPU as possible on a
 * machine it shares with the server.
 */
final class LoopbackLoad {

  /** One phase's figures. */
  record Result(long requests, long errors, double seconds, long[] latenciesNanos) {
    double throughput() {
      return requests / seconds;
    }
  }

  private static final AtomicLong KEYS = new AtomicLong();
  private static final byte[] BODY =
      "{\"amount\":1000,\"currency\":\"EUR\",\"source\":\"acct_1\",\"destination\":\"acct_2\"}"
          .getBytes(StandardCharsets.US_ASCII);

  private LoopbackLoad() {}

  /**
   * Runs {@code connections} loops against {@code path} for {@code seconds}, at most {@code
   * maxRequests} in all.
   */
  static Result run(int port, String path, int connections, double seconds, int maxRequests)
      throws Exception {
    int perConnection = Math.max(1, maxRequests / connections);
    long[][] latencies = new long[connections][perConnection];
    int[] counts = new int[connections];
    long[] errors = new long[connections];
    CountDownLatch ready = new CountDownLatch(connections);
    CountDownLatch go = new CountDownLatch(1);
    long[] deadline = new long[1];
    List<Thread> threads = new ArrayList<>();
    for (int c = 0; c < connections; c++) {
      int id = c;
      Thread t =
          new Thread(
              () -> {
                try (Socket socket = new Socket("127.0.0.1", port)) {
                  socket.setTcpNoDelay(true);
                  OutputStream out = socket.getOutputStream();
                  InputStream in = new BufferedInputStream(socket.getInputStream(), 8192);
                  ready.countDown();
                  go.await();
                  while (counts[id] < perConnection && System.nanoTime() < deadline[0]) {
                    byte[] request = request(path, "bench-" + KEYS.incrementAndGet());
                    long start = System.nanoTime();
                    out.write(request);
                    out.flush();
                    int status = readResponse(in);
                    latencies[id][counts[id]++] = System.nanoTime() - start;
                    if (status != 201) {
                      errors[id]++;
                    }
                  }
                } catch (Exception e) {
                  errors[id]++;
                  ready.countDown();
                }
              },
              "load-" + c);
      threads.add(t);
      t.start();
    }
    ready.await();
    long start = System.nanoTime();
    deadline[0] = start + (long) (seconds * 1e9);
    go.countDown();
    for (Thread t : threads) {
      t.join();
    }
    double elapsed = (System.nanoTime() - start) / 1e9;
    int total = Arrays.stream(counts).sum();
    long[] all = new long[total];
    int at = 0;
    for (int c = 0; c < connections; c++) {
      System.arraycopy(latencies[c], 0, all, at, counts[c]);
      at += counts[c];
    }
    return new Result(total, Arrays.stream(errors).sum(), elapsed, all);
  }

  private static byte[] request(String path, String key) {
    String head =
        "POST "
            + path
            + " HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            + "Api-Key: sk_bench_merchant\r\nIdempotency-Key: "
            + key
            + "\r\nContent-Length: "
            + BODY.length
            + "\r\n\r\n";
    byte[] h = head.getBytes(StandardCharsets.US_ASCII);
    byte[] all = Arrays.copyOf(h, h.length + BODY.length);
    System.arraycopy(BODY, 0, all, h.length, BODY.length);
    return all;
  }

  /** Reads one response with a Content-Length body; returns its status. */
  private static int readResponse(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int status = -1;
    int length = 0;
    boolean first = true;
    while (true) {
      int b = in.read();
      if (b < 0) {
        throw new IOException("connection closed mid-response");
      }
      if (b == '\n') {
        String l = line.toString().trim();
        line.setLength(0);
        if (l.isEmpty()) {
          break;
        }
        if (first) {
          status = Integer.parseInt(l.substring(9, 12));
          first = false;
        } else if (l.regionMatches(true, 0, "Content-Length:", 0, 15)) {
          length = Integer.parseInt(l.substring(15).trim());
        }
      } else {
        line.append((char) b);
      }
    }
    in.skipNBytes(length);
    return status;
  }

  /** The latency at this quantile (0-1), in microseconds; sorts the array. */
  static double percentileMicros(long[] latencies, double q) {
    if (latencies.length == 0) {
      return Double.NaN;
    }
    Arrays.sort(latencies);
    int i = (int) Math.min(latencies.length - 1, Math.round(q * (latencies.length - 1)));
    return latencies[i] / 1_000.0;
  }
}
