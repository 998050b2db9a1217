package dev.once.servlet;

import static dev.once.servlet.GuardedApp.key;
import static org.assertj.core.api.Assertions.assertThat;

import java.net.http.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Many identical requests at the same instant, each on its own connection: the handler runs once.
 */
@Timeout(120)
class HerdTest extends GuardedAppTest {

  private static final int HERD = 200;

  private List<HttpResponse<String>> stampede(String path, String key) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(HERD);
    CountDownLatch go = new CountDownLatch(1);
    try {
      List<Future<HttpResponse<String>>> all = new ArrayList<>();
      for (int i = 0; i < HERD; i++) {
        all.add(
            pool.submit(
                () -> {
                  go.await();
                  return shop.postJson(path, key, "{\"amount\":1000,\"currency\":\"EUR\"}");
                }));
      }
      go.countDown();
      List<HttpResponse<String>> responses = new ArrayList<>();
      for (Future<HttpResponse<String>> f : all) {
        responses.add(f.get(60, TimeUnit.SECONDS));
      }
      return responses;
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void twoHundredIdenticalRequestsRunTheHandlerOnceAndTheRestAre409OrReplays() throws Exception {
    String key = key();

    List<HttpResponse<String>> responses = stampede("/api/slow?ms=300", key);

    assertThat(shop.app.executions("/api/slow")).isEqualTo(1);
    String payment =
        responses.stream()
            .filter(
                r ->
                    r.statusCode() == 201
                        && r.headers().firstValue("Idempotent-Replayed").isEmpty())
            .map(HttpResponse::body)
            .findFirst()
            .orElseThrow();
    for (HttpResponse<String> r : responses) {
      if (r.statusCode() == 201) {
        assertThat(r.body()).isEqualTo(payment);
      } else {
        assertThat(r.statusCode()).isEqualTo(409);
        assertThat(r.body()).contains("idempotency-request-in-flight");
      }
    }
  }

  @Test
  void inWaitModeTwoHundredIdenticalRequestsAllGetTheOneResult() throws Exception {
    String key = key();

    List<HttpResponse<String>> responses = stampede("/wait/api/slow?ms=300", key);

    assertThat(shop.app.executions("/wait/api/slow")).isEqualTo(1);
    assertThat(responses).extracting(HttpResponse::statusCode).containsOnly(201);
    assertThat(responses).extracting(HttpResponse::body).containsOnly(responses.get(0).body());
    assertThat(responses)
        .filteredOn(r -> r.headers().firstValue("Idempotent-Replayed").isPresent())
        .hasSize(HERD - 1);
  }
}
