package dev.once.client;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.Optional;
import javax.net.ssl.SSLSession;
import org.jspecify.annotations.Nullable;

/** A response of one attempt with the caller's body in place of the client's classification. */
final class MappedResponse<T> implements HttpResponse<T> {

  private final HttpResponse<?> raw;
  private final @Nullable T body;

  MappedResponse(HttpResponse<?> raw, @Nullable T body) {
    this.raw = raw;
    this.body = body;
  }

  @Override
  public int statusCode() {
    return raw.statusCode();
  }

  @Override
  public HttpRequest request() {
    return raw.request();
  }

  @Override
  public Optional<HttpResponse<T>> previousResponse() {
    // Intermediate (redirect) responses carry no body.
    return raw.previousResponse().map(p -> new MappedResponse<>(p, null));
  }

  @Override
  public HttpHeaders headers() {
    return raw.headers();
  }

  @Override
  public @Nullable T body() {
    return body;
  }

  @Override
  public Optional<SSLSession> sslSession() {
    return raw.sslSession();
  }

  @Override
  public URI uri() {
    return raw.uri();
  }

  @Override
  public HttpClient.Version version() {
    return raw.version();
  }

  @Override
  public String toString() {
    return raw.toString();
  }
}
