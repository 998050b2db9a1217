package dev.once.gateway;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.UUID;

/**
 * A JDK {@link HttpClient} aimed at one gateway: JSON POSTs from one merchant, with or without a
 * key.
 */
final class Client {

  static final String MERCHANT = "sk_test_merchant_1";

  private final HttpClient http =
      HttpClient.newBuilder()
          .version(HttpClient.Version.HTTP_1_1)
          .connectTimeout(Duration.ofSeconds(5))
          .build();
  private final URI base;

  Client(URI base) {
    this.base = base;
  }

  static String key() {
    return UUID.randomUUID().toString();
  }

  /**
   * The head of a JSON POST from {@link #MERCHANT} with this key (none if null) and {@code
   * Content-Length}, and the first bytes of its body, for tests that write to a raw socket and
   * control when the rest comes.
   */
  static byte[] rawPost(String path, String key, int contentLength, String bodyStart) {
    return rawPost(path, key, contentLength, bodyStart, new String[0]);
  }

  /** {@link #rawPost}, with more header lines ({@code "Name: value"}). */
  static byte[] rawPost(
      String path, String key, int contentLength, String bodyStart, String... headerLines) {
    return ("POST "
            + path
            + " HTTP/1.1\r\nHost: gateway\r\nApi-Key: "
            + MERCHANT
            + "\r\n"
            + (key == null ? "" : "Idempotency-Key: " + key + "\r\n")
            + String.join("", java.util.Arrays.stream(headerLines).map(l -> l + "\r\n").toList())
            + "Content-Type: application/json\r\nContent-Length: "
            + contentLength
            + "\r\n\r\n"
            + bodyStart)
        .getBytes(java.nio.charset.StandardCharsets.US_ASCII);
  }

  /**
   * A JSON POST from {@link #MERCHANT}; with the key unless it is null; extra headers as name,
   * value pairs.
   */
  HttpRequest.Builder post(String path, String key, String json, String... headers) {
    HttpRequest.Builder b =
        HttpRequest.newBuilder(base.resolve(path))
            .timeout(Duration.ofSeconds(30))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json));
    if (key != null) {
      b.header("Idempotency-Key", key);
    }
    boolean tenantGiven = false;
    for (int i = 0; i < headers.length; i += 2) {
      b.header(headers[i], headers[i + 1]);
      tenantGiven |= headers[i].equalsIgnoreCase("Api-Key");
    }
    if (!tenantGiven) {
      b.header("Api-Key", MERCHANT);
    }
    return b;
  }

  HttpResponse<String> postJson(String path, String key, String json, String... headers)
      throws IOException, InterruptedException {
    return send(post(path, key, json, headers));
  }

  HttpResponse<String> get(String path) throws IOException, InterruptedException {
    return send(HttpRequest.newBuilder(base.resolve(path)).timeout(Duration.ofSeconds(30)).GET());
  }

  /**
   * Sends the request; a request built for {@code http://placeholder} goes to this client's base
   * instead.
   */
  HttpResponse<String> send(HttpRequest.Builder request) throws IOException, InterruptedException {
    HttpRequest built = request.build();
    if (built.uri().getHost().equals("placeholder")) {
      built =
          HttpRequest.newBuilder(built, (n, v) -> true)
              .uri(
                  base.resolve(
                      built.uri().getRawPath()
                          + (built.uri().getRawQuery() == null
                              ? ""
                              : "?" + built.uri().getRawQuery())))
              .build();
    }
    return http.send(built, HttpResponse.BodyHandlers.ofString());
  }

  java.util.concurrent.CompletableFuture<HttpResponse<String>> sendAsync(
      HttpRequest.Builder request) {
    return http.sendAsync(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  /**
   * {@code once_gateway_buffered_bytes}, as {@code /metrics} on this management client shows it.
   */
  static long bufferedBytes(Client management) throws IOException, InterruptedException {
    String metrics = management.get("/metrics").body();
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile("(?m)^once_gateway_buffered_bytes(?:\\{[^}]*\\})? (\\S+)$")
            .matcher(metrics);
    if (!m.find()) {
      throw new IllegalStateException("/metrics shows no once_gateway_buffered_bytes");
    }
    return (long) Double.parseDouble(m.group(1));
  }
}
