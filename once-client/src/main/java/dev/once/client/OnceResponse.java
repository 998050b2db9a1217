package dev.once.client;

import dev.once.protocol.WireProtocol;
import java.net.http.HttpHeaders;
import java.net.http.HttpResponse;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * The final answer to one logical operation, with what it took to get it.
 *
 * @param <T> the body type of the caller's {@link HttpResponse.BodyHandler}
 */
public final class OnceResponse<T> {

  private final HttpResponse<T> response;
  private final @Nullable String key;
  private final int attempts;

  OnceResponse(HttpResponse<T> response, @Nullable String key, int attempts) {
    this.response = response;
    this.key = key;
    this.attempts = attempts;
  }

  /** The last attempt's response; its {@link HttpResponse#request()} carries the key. */
  public HttpResponse<T> response() {
    return response;
  }

  public int statusCode() {
    return response.statusCode();
  }

  public T body() {
    return response.body();
  }

  public HttpHeaders headers() {
    return response.headers();
  }

  /**
   * Whether the server answered with the recorded response of an earlier attempt ({@code
   * Idempotent-Replayed: true}) instead of running the operation for this one.
   */
  public boolean replayed() {
    return response
        .headers()
        .firstValue(WireProtocol.REPLAYED_HEADER)
        .map(v -> v.trim().equalsIgnoreCase("true"))
        .orElse(false);
  }

  /** The {@code Idempotency-Key} every attempt carried; empty for a request sent without one. */
  public Optional<String> idempotencyKey() {
    return Optional.ofNullable(key);
  }

  /** How many requests were sent, at least one. */
  public int attempts() {
    return attempts;
  }

  @Override
  public String toString() {
    return "OnceResponse["
        + response.request().method()
        + " "
        + response.uri()
        + " -> "
        + statusCode()
        + ", attempts="
        + attempts
        + (replayed() ? ", replayed" : "")
        + "]";
  }
}
