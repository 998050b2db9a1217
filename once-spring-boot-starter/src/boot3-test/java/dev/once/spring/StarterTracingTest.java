package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.spring.shop.FakeShopApplication;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.autoconfigure.actuate.observability.AutoConfigureObservability;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.TestConfiguration;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Import;

/**
 * A real application traced by Spring Boot's OpenTelemetry auto-configuration, exported to the
 * SDK's in-memory exporter: the request's server span continues the client's trace, says what Once
 * decided, and has the store calls as children.
 */
@SpringBootTest(
    classes = FakeShopApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {"once.store.type=memory", "management.tracing.sampling.probability=1.0"})
@Import(StarterTracingTest.Exporter.class)
@AutoConfigureObservability(metrics = false) // tests turn tracing off unless asked
class StarterTracingTest {

  private static final String TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";

  @TestConfiguration(proxyBeanMethods = false)
  static class Exporter {
    @Bean
    InMemorySpanExporter inMemorySpanExporter() {
      return InMemorySpanExporter.create();
    }
  }

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  @LocalServerPort int port;

  @Autowired InMemorySpanExporter exporter;

  @Autowired SdkTracerProvider tracerProvider;

  @BeforeEach
  void reset() {
    exporter.reset();
  }

  private void post(String key) throws Exception {
    client.send(
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/api/orders"))
            .timeout(Duration.ofSeconds(20))
            .header("Content-Type", "application/json")
            .header("Api-Key", "sk_shop_1")
            .header("Idempotency-Key", key)
            .header("traceparent", "00-" + TRACE_ID + "-00f067aa0ba902b7-01")
            .POST(HttpRequest.BodyPublishers.ofString("{\"amount\":7}"))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  /** The server spans of the client's trace, once every span has been exported. */
  private List<SpanData> serverSpans() {
    tracerProvider.forceFlush().join(10, TimeUnit.SECONDS);
    return exporter.getFinishedSpanItems().stream()
        .filter(s -> s.getTraceId().equals(TRACE_ID))
        .filter(s -> s.getKind() == io.opentelemetry.api.trace.SpanKind.SERVER)
        .toList();
  }

  @Test
  void theServerSpanCarriesTheDecisionAndTheStoreCallsAreItsChildren() throws Exception {
    String key = UUID.randomUUID().toString();

    post(key);
    post(key);

    List<SpanData> servers = serverSpans();
    assertThat(servers).hasSize(2);
    assertThat(servers)
        .extracting(s -> s.getAttributes().get(AttributeKey.stringKey("once.decision")))
        .containsExactlyInAnyOrder("executed", "replayed");
    assertThat(servers)
        .allMatch(s -> key.equals(s.getAttributes().get(AttributeKey.stringKey("once.key"))));
    SpanData first =
        servers.stream()
            .filter(
                s ->
                    s.getEvents().stream()
                        .map(EventData::getName)
                        .toList()
                        .contains("once.executed"))
            .findFirst()
            .orElseThrow();
    assertThat(
            exporter.getFinishedSpanItems().stream()
                .filter(s -> s.getParentSpanId().equals(first.getSpanId()))
                .map(SpanData::getName))
        .contains("once store claim", "once store complete");
  }
}
