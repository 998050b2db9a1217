package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.InputStream;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Request heads alone cannot exhaust the gateway (issue 30, item 6): a head that declares a large
 * body costs nothing until its bytes arrive, and the buffer budget follows the heap, so bodies that
 * do arrive past it get 503 and nothing else. The gateway runs in its own process with a small
 * heap, where an {@link OutOfMemoryError} would show as a dead proxy.
 */
@Timeout(180)
class HeadFloodTest {

  private static final int FOUR_MIB = 4 << 20;

  @TempDir Path dir;

  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();

  @Test
  void aHundredHeadsDeclaringFourMebibytesHoldNothingAndBodiesOverTheBudgetGet503()
      throws Exception {
    try (FakeUpstream upstream = new FakeUpstream()) {
      Path yaml = dir.resolve("gateway.yaml");
      Files.writeString(yaml, TestGateway.ROUTES);
      ChildGateway gateway =
          ChildGateway.start(
              "96m",
              TestGateway.args(
                  upstream.url(),
                  dir,
                  "--config",
                  yaml.toString(),
                  "--request-body-timeout",
                  "60s"));
      List<Socket> heads = new ArrayList<>();
      try {
        int port = gateway.uri().getPort();
        for (int i = 0; i < 100; i++) {
          Socket socket = new Socket("127.0.0.1", port);
          socket.setSoTimeout(30_000);
          // The upstream takes a second, so admitted bodies stay held while the others arrive.
          socket.getOutputStream().write(Client.rawPost("/large/slow/1000", key(), FOUR_MIB, ""));
          socket.getOutputStream().write("{\"pad\":\"".getBytes(StandardCharsets.US_ASCII));
          heads.add(socket);
        }

        HttpResponse<String> honest =
            send(gateway.uri().resolve("/payments/honest"), key(), "{\"amount\":1}");
        HttpResponse<String> health =
            http.send(
                HttpRequest.newBuilder(gateway.management().resolve("/health"))
                    .timeout(Duration.ofSeconds(10))
                    .build(),
                HttpResponse.BodyHandlers.ofString());

        assertThat(honest.statusCode()).isEqualTo(201);
        assertThat(health.statusCode()).isEqualTo(200);

        // Twelve of them send their 4 MiB, 48 MiB in all, over a budget of a quarter of 96 MiB.
        // Each answer is read while its body is still being written: a refusal comes mid-body.
        ExecutorService senders = Executors.newFixedThreadPool(24);
        try {
          List<Future<Void>> writes = new ArrayList<>();
          List<Future<String>> statuses = new ArrayList<>();
          for (Socket socket : heads.subList(0, 12)) {
            writes.add(senders.submit(() -> finishBody(socket)));
            statuses.add(senders.submit(() -> status(socket)));
          }
          List<String> seen = new ArrayList<>();
          for (Future<String> status : statuses) {
            seen.add(status.get());
          }
          assertThat(seen).allMatch(s -> s.equals("201") || s.equals("503"), "201 or 503");
          for (Future<Void> write : writes) {
            write.get();
          }
        } finally {
          senders.shutdownNow();
        }
        HttpResponse<String> after =
            send(gateway.uri().resolve("/payments/after"), key(), "{\"amount\":2}");
        assertThat(after.statusCode()).isEqualTo(201);
      } finally {
        for (Socket socket : heads) {
          socket.close();
        }
        gateway.close();
      }
    }
  }

  @Test
  void theBudgetIsAQuarterOfTheHeapUnlessConfigured() {
    GatewayConfig.Builder builder =
        GatewayConfig.builder().upstream("http://127.0.0.1:9").heapBytes(512L << 20);

    assertThat(builder.build().maxBufferedBytes()).isEqualTo(128L << 20);
    assertThat(builder.maxBufferedBytes(256 << 20).build().maxBufferedBytes())
        .isEqualTo(256L << 20);
  }

  @Test
  void aBudgetOverHalfOfTheHeapIsRefusedNamingTheOption() {
    GatewayConfig.Builder builder =
        GatewayConfig.builder()
            .upstream("http://127.0.0.1:9")
            .heapBytes(256L << 20)
            .maxBufferedBytes((128 << 20) + 1);

    assertThatThrownBy(builder::build)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("max-buffered-bytes")
        .hasMessageContaining("half of the heap");
  }

  private HttpResponse<String> send(URI uri, String key, String json)
      throws IOException, InterruptedException {
    return http.send(
        HttpRequest.newBuilder(uri)
            .timeout(Duration.ofSeconds(10))
            .header("Content-Type", "application/json")
            .header("Api-Key", Client.MERCHANT)
            .header("Idempotency-Key", key)
            .POST(HttpRequest.BodyPublishers.ofString(json))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** Sends the rest of a flooding body (the head and 8 bytes went first). */
  private static Void finishBody(Socket socket) {
    byte[] pad = new byte[FOUR_MIB - 8 - 2];
    Arrays.fill(pad, (byte) 'x');
    try {
      socket.getOutputStream().write(pad);
      socket.getOutputStream().write("\"}".getBytes(StandardCharsets.US_ASCII));
    } catch (IOException e) {
      // Refused mid-body and closed after the drain: the answer was read as it came.
    }
    return null;
  }

  /** The status code of the answer on {@code socket}, or the failure that took its place. */
  private static String status(Socket socket) {
    try {
      InputStream in = socket.getInputStream();
      return new String(in.readNBytes(12), StandardCharsets.US_ASCII).substring(9);
    } catch (IOException | StringIndexOutOfBoundsException e) {
      return e.toString();
    }
  }
}
