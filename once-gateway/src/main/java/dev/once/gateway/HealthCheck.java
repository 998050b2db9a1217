package dev.once.gateway;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;

/**
 * {@code java -cp once-gateway.jar dev.once.gateway.HealthCheck URL}: exits 0 if the URL answers
 * 200 within 2 seconds, else 1. For container health checks in images without curl.
 */
public final class HealthCheck {

  private HealthCheck() {}

  public static void main(String[] args) {
    String url = args.length > 0 ? args[0] : "http://127.0.0.1:8081/health";
    try {
      HttpResponse<Void> r =
          HttpClient.newBuilder()
              .connectTimeout(Duration.ofSeconds(2))
              .build()
              .send(
                  HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
                  HttpResponse.BodyHandlers.discarding());
      System.exit(r.statusCode() == 200 ? 0 : 1);
    } catch (Exception e) {
      // Unreachable, timed out or interrupted: unhealthy either way.
      System.exit(1);
    }
  }
}
