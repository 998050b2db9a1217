package dev.once.fuzz;

import static org.assertj.core.api.Assertions.assertThat;

import com.code_intelligence.jazzer.api.FuzzedDataProvider;
import com.code_intelligence.jazzer.junit.FuzzTest;
import dev.once.ExecutionPolicy;
import dev.once.InFlightPolicy;
import dev.once.Once;
import dev.once.Outcome;
import dev.once.fingerprint.JsonCanonicalizer;
import dev.once.http.Decision;
import dev.once.http.Headers;
import dev.once.http.HttpIdempotency;
import dev.once.http.HttpOutcomes;
import dev.once.http.IncomingRequest;
import dev.once.http.ProblemType;
import dev.once.http.Problems;
import dev.once.http.Route;
import dev.once.http.RoutePolicy;
import dev.once.http.StoredResponse;
import dev.once.store.InMemoryStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.stream.Collectors;

/**
 * The framework-neutral HTTP path ({@link HttpIdempotency}) fed fuzzed methods, paths, headers and
 * bodies, and fuzzed handler responses: every request gets a well-formed decision (pass through, a
 * problem+json with a documented status, or proceed), a proceeding request blocks its duplicate
 * with a 409 until it is finished, and a recorded response is replayed byte for byte. Nothing
 * throws and nothing waits longer than the route's bounded wait.
 */
class HttpRequestFuzzTest {

  private static final String[] METHODS = {"POST", "PATCH", "PUT", "DELETE", "GET", "post", "HEAD"};
  private static final String[] PATHS = {
    "/required/a", "/small/b", "/wait/c", "/stamped/d", "/other", "/"
  };
  private static final String[] HEADER_NAMES = {
    "Idempotency-Key",
    "idempotency-key",
    "Content-Type",
    "Api-Key",
    "Connection",
    "Set-Cookie",
    "X-Trace"
  };
  private static final String[] CONTENT_TYPES = {
    "application/json",
    "application/problem+json; charset=utf-8",
    "text/plain",
    "APPLICATION/JSON ;x=y",
    ""
  };
  private static final Set<Integer> PROBLEM_STATUSES =
      Arrays.stream(ProblemType.values())
          .map(ProblemType::status)
          .collect(Collectors.toUnmodifiableSet());

  /** Shared by every input, so that no input starts a thread of its own. */
  private static final ScheduledExecutorService HEARTBEATS =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "fuzz-heartbeat");
            t.setDaemon(true);
            return t;
          });

  @FuzzTest(maxDuration = "15s")
  void everyRequestGetsAWellFormedDecision(FuzzedDataProvider data) {
    try (Once once = Once.builder(InMemoryStore.create()).heartbeatScheduler(HEARTBEATS).build()) {
      HttpIdempotency http = http(once);
      IncomingRequest request = request(data);
      Route route = http.route(request.path());
      Decision first = http.begin(route, request);
      assertWellFormed(first);
      if (first instanceof Decision.Proceed proceed) {
        assertWellFormed(http.begin(route, request)); // in flight: 409, or a bounded wait then 409
        StoredResponse response = response(data);
        proceed.exchange().record(response);
        Decision again = http.begin(route, request);
        assertWellFormed(again);
        if (again instanceof Decision.Respond r && r.replayed()) {
          assertThat(HttpOutcomes.of(response.status())).isNotEqualTo(Outcome.TRANSIENT);
          assertThat(r.response().status()).isEqualTo(response.status());
          assertThat(r.response().body()).isEqualTo(response.body());
        } else if (again instanceof Decision.Proceed retry) {
          assertThat(HttpOutcomes.of(response.status())).isEqualTo(Outcome.TRANSIENT);
          retry.exchange().fail();
        }
      }
    }
  }

  private static HttpIdempotency http(Once once) {
    ExecutionPolicy noHeartbeat = ExecutionPolicy.builder().heartbeat(false).build();
    return HttpIdempotency.builder(once)
        .route(
            "/required/**", RoutePolicy.builder().keyRequired(true).execution(noHeartbeat).build())
        .route(
            "/small/**",
            RoutePolicy.builder()
                .maxRequestBytes(16)
                .execution(ExecutionPolicy.builder().heartbeat(false).maxResultBytes(64).build())
                .build())
        .route(
            "/wait/**",
            RoutePolicy.builder()
                .maxWaitersPerKey(1)
                .execution(
                    ExecutionPolicy.builder()
                        .heartbeat(false)
                        .inFlight(InFlightPolicy.waitUpTo(Duration.ofMillis(20)))
                        .build())
                .build())
        .route(
            "/stamped/**",
            RoutePolicy.builder()
                .excludeJsonPointer("/sent_at")
                .denyReplayHeader("X-Trace")
                .execution(noHeartbeat)
                .build())
        .defaults(
            RoutePolicy.builder().methods("POST", "PUT", "DELETE").execution(noHeartbeat).build())
        .build();
  }

  private static IncomingRequest request(FuzzedDataProvider data) {
    String method = data.consumeBoolean() ? data.pickValue(METHODS) : data.consumeString(10);
    String path = data.consumeBoolean() ? data.pickValue(PATHS) : data.consumeString(40);
    String query = data.consumeBoolean() ? null : data.consumeString(20);
    Headers.Builder headers = Headers.builder();
    int fields = data.consumeInt(0, 6);
    for (int i = 0; i < fields; i++) {
      String name = data.consumeBoolean() ? data.pickValue(HEADER_NAMES) : data.consumeString(20);
      String value =
          name.equalsIgnoreCase("Content-Type") && data.consumeBoolean()
              ? data.pickValue(CONTENT_TYPES)
              : data.consumeString(300);
      if (!name.isEmpty()) {
        headers.add(name, value);
      }
    }
    String principal = data.consumeBoolean() ? null : data.consumeString(20);
    byte[] body = data.consumeBytes(data.consumeInt(0, 64));
    return new IncomingRequest(method, path, query, headers.build(), body, principal);
  }

  private static StoredResponse response(FuzzedDataProvider data) {
    int status = data.consumeInt(100, 599);
    Headers.Builder headers = Headers.builder();
    int fields = data.consumeInt(0, 4);
    for (int i = 0; i < fields; i++) {
      String name = data.consumeBoolean() ? data.pickValue(HEADER_NAMES) : data.consumeString(20);
      if (!name.isEmpty()) {
        headers.add(name, data.consumeString(100));
      }
    }
    return new StoredResponse(status, headers.build(), data.consumeRemainingAsBytes());
  }

  private static void assertWellFormed(Decision decision) {
    assertThat(decision).isNotNull();
    if (decision instanceof Decision.Respond respond && !respond.replayed()) {
      StoredResponse problem = respond.response();
      assertThat(PROBLEM_STATUSES).contains(problem.status());
      assertThat(problem.headers().first("Content-Type")).contains(Problems.MEDIA_TYPE);
      String json =
          new String(JsonCanonicalizer.canonicalize(problem.body()), StandardCharsets.UTF_8);
      assertThat(json)
          .contains("\"status\":" + problem.status())
          .contains("\"type\":\"" + ProblemType.BASE_URI);
      if (problem.status() == 409 || problem.status() == 503 || problem.status() == 429) {
        if (problem.headers().first("Retry-After").isPresent()) {
          assertThat(Long.parseLong(problem.headers().first("Retry-After").get())).isPositive();
        }
      }
    }
  }
}
