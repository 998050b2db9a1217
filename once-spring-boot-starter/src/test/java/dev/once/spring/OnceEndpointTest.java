package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.spring.shop.FakeShopApplication;
import dev.once.store.ClaimRequest;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;

/** The {@code once} Actuator endpoint over HTTP: lookup, fenced force-release, bounded purge. */
@SpringBootTest(
    classes = FakeShopApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {"once.store.type=memory", "management.endpoints.web.exposure.include=once"})
class OnceEndpointTest {

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @LocalServerPort int port;

  @Autowired IdempotencyStore store;

  private HttpResponse<String> send(HttpRequest.Builder b) throws Exception {
    return client.send(
        b.timeout(Duration.ofSeconds(20)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private HttpRequest.Builder at(String pathAndQuery) {
    return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + pathAndQuery));
  }

  private static String q(String s) {
    return URLEncoder.encode(s, StandardCharsets.UTF_8);
  }

  private RecordId inFlight() {
    return inFlight(Scope.of("tenant-1", "POST /api/orders"));
  }

  private RecordId inFlight(Scope scope) {
    RecordId id = RecordId.of(scope, IdempotencyKey.of("stuck-" + UUID.randomUUID()));
    store.claim(
        new ClaimRequest(
            id,
            Fingerprint.parse("1:" + "ab".repeat(32)),
            Duration.ofMinutes(5),
            Duration.ofHours(1)));
    return id;
  }

  private HttpResponse<String> release(RecordId id) throws Exception {
    String json = "{\"scope\":\"" + id.scope().value() + "\",\"key\":\"" + id.key().value() + "\"}";
    return send(
        at("/actuator/once")
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(json)));
  }

  @Test
  void aStuckKeyIsLookedUpThenReleasedOnceAndIsFreeAfterwards() throws Exception {
    RecordId id = inFlight();
    String query = "?scope=" + q(id.scope().value()) + "&key=" + q(id.key().value());

    HttpResponse<String> found = send(at("/actuator/once" + query).GET());
    assertThat(found.statusCode()).isEqualTo(200);
    assertThat(found.body())
        .contains("\"state\":\"IN_PROGRESS\"")
        .containsPattern("\"token\":\"[0-9]+\"") // text: a token may exceed 2^53
        .doesNotContain("result\":\"");

    HttpResponse<String> released = release(id);
    assertThat(released.statusCode()).isEqualTo(200);
    assertThat(released.body())
        .contains("\"result\":\"released\"")
        .containsPattern("\"token\":\"[0-9]+\"");
    assertThat(store.get(id)).isEmpty();

    HttpResponse<String> again = release(id);
    assertThat(again.body()).contains("\"result\":\"absent\"");
    assertThat(send(at("/actuator/once" + query).GET()).statusCode()).isEqualTo(404);
  }

  @Test
  void aRequestsRecordIsFoundByTheTenantAndPathTheClientSentAndShowsNoLeaseOnceFinished()
      throws Exception {
    String key = "order-" + UUID.randomUUID();
    HttpResponse<String> created =
        send(
            at("/api/orders/42/refunds")
                .header("Api-Key", "shop-1")
                .header("Idempotency-Key", key)
                .POST(HttpRequest.BodyPublishers.noBody()));
    assertThat(created.statusCode()).isEqualTo(201);

    HttpResponse<String> found =
        send(
            at("/actuator/once?tenant=shop-1&method=post&path="
                    + q("/api/orders/42/refunds")
                    + "&key="
                    + q(key))
                .GET());

    assertThat(found.statusCode()).isEqualTo(200);
    assertThat(found.body())
        .contains(
            "\"scope\":\""
                + Scope.of(Scope.hash("shop-1"), "POST /api/orders/{id}/refunds").value()
                + "\"")
        .contains("\"state\":\"COMPLETED\"")
        .contains("\"leaseUntil\":null")
        .contains("\"leaseRemainingMillis\":0");
    HttpResponse<String> otherTenant =
        send(at("/actuator/once?tenant=shop-2&path=/api/orders/42/refunds&key=" + q(key)).GET());
    assertThat(otherTenant.statusCode()).isEqualTo(404);
  }

  @Test
  void aStuckKeyIsReleasedByTheTenantAndPathMethodPostByDefault() throws Exception {
    RecordId id = inFlight(Scope.of(Scope.hash("shop-2"), "POST /api/orders"));
    String json =
        "{\"tenant\":\"shop-2\",\"path\":\"/api/orders\",\"key\":\"" + id.key().value() + "\"}";

    HttpResponse<String> released =
        send(
            at("/actuator/once")
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(json)));

    assertThat(released.body()).contains("\"result\":\"released\"");
    assertThat(store.get(id)).isEmpty();
  }

  @Test
  void aRecordIsNamedByScopeOrByPathNotBothNorNeither() throws Exception {
    for (String query :
        new String[] {"scope=s&path=/api/orders&key=k", "key=k", "scope=s&tenant=t&key=k"}) {
      assertThat(send(at("/actuator/once?" + query).GET()).statusCode()).as(query).isEqualTo(400);
    }
  }

  @Test
  void stuckKeysAreListedOldestFirstWithHowLongTheyHaveRunAndFinishedOnesAreNot() throws Exception {
    RecordId first = inFlight();
    Thread.sleep(20); // a later creation time on the store's (system) clock
    RecordId second = inFlight();
    RecordId done = inFlight();
    long token = ((dev.once.store.ClaimResult.Existing) claimAgain(done)).record().token();
    store.complete(done, token, new byte[] {1}, Duration.ofHours(1));

    HttpResponse<String> all = send(at("/actuator/once/in-flight?olderThan=0s&limit=1000").GET());
    HttpResponse<String> none = send(at("/actuator/once/in-flight?olderThan=1h&limit=10").GET());

    assertThat(all.statusCode()).isEqualTo(200);
    String body = all.body();
    assertThat(body)
        .contains("\"complete\":true")
        .contains("\"createdAt\":\"")
        .containsPattern("\"runningMillis\":[0-9]+")
        .doesNotContain(done.key().value());
    assertThat(body.indexOf(first.key().value()))
        .isPositive()
        .isLessThan(body.indexOf(second.key().value()));
    assertThat(none.statusCode()).isEqualTo(200);
    assertThat(none.body()).contains("\"records\":[]").contains("\"complete\":true");
  }

  @Test
  void aBadBoundOrLimitIs400AndAnotherPathBelowTheEndpointIs404() throws Exception {
    for (String query :
        new String[] {
          "olderThan=banana&limit=10",
          "olderThan=-5s&limit=10",
          "olderThan=PT-5S&limit=10",
          "olderThan=999999999999d&limit=10",
          "olderThan=30s&limit=0",
          "olderThan=30s&limit=1001",
          "olderThan=30s&limit=ten",
          "limit=10"
        }) {
      HttpResponse<String> bad = send(at("/actuator/once/in-flight?" + query).GET());
      assertThat(bad.statusCode()).as(query).isEqualTo(400);
      assertThat(bad.body()).as(query).doesNotContain("banana");
    }
    assertThat(send(at("/actuator/once/elsewhere?olderThan=30s&limit=10").GET()).statusCode())
        .isEqualTo(404);
  }

  private dev.once.store.ClaimResult claimAgain(RecordId id) {
    return store.claim(
        new ClaimRequest(
            id,
            Fingerprint.parse("1:" + "ab".repeat(32)),
            Duration.ofMinutes(5),
            Duration.ofHours(1)));
  }

  @Test
  void aMalformedKeyIs400AndAPurgeAnswersItsCount() throws Exception {
    HttpResponse<String> bad = send(at("/actuator/once?scope=s&key=" + q("bad key\u0001")).GET());
    assertThat(bad.statusCode()).isEqualTo(400);

    HttpResponse<String> purge = send(at("/actuator/once").DELETE());
    assertThat(purge.statusCode()).isEqualTo(200);
    assertThat(purge.body()).contains("\"purged\":").contains("\"more\":false");
  }
}
