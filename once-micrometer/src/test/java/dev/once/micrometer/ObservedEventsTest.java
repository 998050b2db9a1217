package dev.once.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Admission;
import dev.once.ExecutionPolicy;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Once;
import dev.once.ResultCodec;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.common.AttributeKey;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.EventData;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The engine's decisions as OpenTelemetry spans, through Micrometer Tracing's bridge into the
 * OpenTelemetry SDK with an in-memory exporter (no collector): the request's span carries the
 * decision, and every store call is a child span of it.
 */
class ObservedEventsTest {

  private static final Fingerprint FINGERPRINT = new Fingerprint(1, "ab".repeat(32));
  private static final Fingerprint OTHER = new Fingerprint(1, "cd".repeat(32));
  private static final Scope SCOPE = Scope.of("tenant", "POST /payments");

  private final InMemorySpanExporter exporter = InMemorySpanExporter.create();
  private final SdkTracerProvider provider =
      SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build();
  private final ObservationRegistry registry = ObservationRegistry.create();
  private final Once once;

  ObservedEventsTest() {
    OtelCurrentTraceContext context = new OtelCurrentTraceContext();
    OtelTracer tracer =
        new OtelTracer(
            provider.get("once-test"),
            context,
            event -> {},
            new OtelBaggageManager(context, List.of(), List.of()));
    registry.observationConfig().observationHandler(new DefaultTracingObservationHandler(tracer));
    once = Once.builder(InMemoryStore.create()).listener(ObservedEvents.of(registry)).build();
  }

  @AfterEach
  void close() {
    once.close();
    provider.close();
  }

  /** Runs {@code work} inside a "request" observation, as a server framework would. */
  private SpanData request(String name, Consumer<Once> work) {
    Observation request = Observation.start(name, registry);
    try (Observation.Scope scope = request.openScope()) {
      work.accept(once);
    } finally {
      request.stop();
    }
    return exporter.getFinishedSpanItems().stream()
        .filter(s -> s.getName().equals(name))
        .findFirst()
        .orElseThrow();
  }

  private static String attribute(SpanData span, String name) {
    return span.getAttributes().get(AttributeKey.stringKey(name));
  }

  private static List<String> events(SpanData span) {
    return span.getEvents().stream().map(EventData::getName).toList();
  }

  private List<SpanData> childrenOf(SpanData parent) {
    return exporter.getFinishedSpanItems().stream()
        .filter(s -> s.getParentSpanId().equals(parent.getSpanId()))
        .toList();
  }

  @Test
  void anExecutionAndItsReplayAreTwoDecisionsAndEveryStoreCallIsAChildSpan() {
    IdempotencyKey key = IdempotencyKey.of("k-" + UUID.randomUUID());
    Consumer<Once> pay = o -> o.execute(SCOPE, key, FINGERPRINT, ResultCodec.utf8(), ctx -> "paid");

    SpanData first = request("first", pay);
    SpanData retry = request("retry", pay);

    assertThat(attribute(first, "once.decision")).isEqualTo("executed");
    assertThat(attribute(first, "once.outcome")).isEqualTo("completed");
    assertThat(attribute(first, "once.key")).isEqualTo(key.value());
    assertThat(events(first)).contains("once.executed");
    assertThat(childrenOf(first))
        .extracting(SpanData::getName)
        .containsExactly("once store claim", "once store complete");
    assertThat(childrenOf(first)).allMatch(s -> s.getTraceId().equals(first.getTraceId()));

    assertThat(attribute(retry, "once.decision")).isEqualTo("replayed");
    assertThat(events(retry)).containsExactly("once.replayed");
    assertThat(childrenOf(retry)).extracting(SpanData::getName).containsExactly("once store claim");
  }

  @Test
  void aMismatchAndAConflictAreDecisionsToo() {
    IdempotencyKey key = IdempotencyKey.of("k-" + UUID.randomUUID());
    once.execute(SCOPE, key, FINGERPRINT, ResultCodec.utf8(), ctx -> "paid");

    SpanData mismatch =
        request("mismatch", o -> o.execute(SCOPE, key, OTHER, ResultCodec.utf8(), ctx -> "twice"));
    assertThat(attribute(mismatch, "once.decision")).isEqualTo("mismatch");

    IdempotencyKey running = IdempotencyKey.of("k-" + UUID.randomUUID());
    Admission first = once.begin(SCOPE, running, FINGERPRINT, once.defaults());
    assertThat(first).isInstanceOf(Admission.Proceed.class);
    SpanData conflict =
        request(
            "conflict",
            o -> o.execute(SCOPE, running, FINGERPRINT, ResultCodec.utf8(), ctx -> "twice"));
    assertThat(attribute(conflict, "once.decision")).isEqualTo("in-flight");
    assertThat(events(conflict)).containsExactly("once.in-flight");
    ((Admission.Proceed) first).lease().release();
  }

  @Test
  void aLeaseTakenOverCarriesTheNewFencingToken() throws Exception {
    IdempotencyKey key = IdempotencyKey.of("k-" + UUID.randomUUID());
    ExecutionPolicy shortLease =
        once.defaults().toBuilder().lease(Duration.ofMillis(50)).heartbeat(false).build();
    Admission abandoned = once.begin(SCOPE, key, FINGERPRINT, shortLease);
    assertThat(abandoned).isInstanceOf(Admission.Proceed.class);
    long firstToken = ((Admission.Proceed) abandoned).lease().token();
    Thread.sleep(200); // the holder "died": its 50 ms lease ends unrenewed

    long[] newToken = new long[1];
    SpanData thief =
        request(
            "thief",
            o ->
                o.execute(
                    SCOPE,
                    key,
                    FINGERPRINT,
                    ResultCodec.utf8(),
                    ctx -> {
                      newToken[0] = ctx.token();
                      return "recovered";
                    }));

    assertThat(events(thief)).containsExactly("once.lease.stolen", "once.executed");
    assertThat(attribute(thief, "once.fencing_token"))
        .isEqualTo(Long.toString(newToken[0]))
        .isNotEqualTo(Long.toString(firstToken));
    assertThat(attribute(thief, "once.decision")).isEqualTo("executed");
  }

  @Test
  void withoutAnObservationInScopeNothingIsAttachedAndNothingBreaks() {
    IdempotencyKey key = IdempotencyKey.of("k-" + UUID.randomUUID());

    once.execute(SCOPE, key, FINGERPRINT, ResultCodec.utf8(), ctx -> "paid");

    assertThat(exporter.getFinishedSpanItems())
        .extracting(SpanData::getName)
        .containsExactly("once store claim", "once store complete");
    assertThat(exporter.getFinishedSpanItems())
        .allMatch(s -> s.getAttributes().get(AttributeKey.stringKey("once.decision")) == null);
  }

  /**
   * The store client's own spans go beneath the store call's, whether the call blocks on the
   * caller's thread or a blocking store makes it on the engine's executor: the observation is
   * opened where the call is made, not after it.
   */
  @Test
  void theStoreClientsSpansGoBeneathTheStoreCallBlockingOrNot() throws Exception {
    IdempotencyStore memory = InMemoryStore.create();
    IdempotencyStore jdbcLike =
        new ForwardingStore() {
          @Override
          protected IdempotencyStore delegate() {
            return memory;
          }

          @Override
          public ClaimResult claim(ClaimRequest request) {
            // As a JDBC or Lettuce instrumentation does: a span of its own, under the current one.
            return Observation.createNotStarted("client", registry)
                .contextualName("client query")
                .observe(() -> super.claim(request));
          }
        };
    try (Once engine = Once.builder(jdbcLike).listener(ObservedEvents.of(registry)).build()) {
      request(
          "blocking",
          o ->
              engine.execute(
                  SCOPE,
                  IdempotencyKey.of("k-" + UUID.randomUUID()),
                  FINGERPRINT,
                  ResultCodec.utf8(),
                  ctx -> "paid"));
      request(
          "async",
          o ->
              engine
                  .beginAsync(
                      SCOPE,
                      IdempotencyKey.of("k-" + UUID.randomUUID()),
                      FINGERPRINT,
                      engine.defaults())
                  .toCompletableFuture()
                  .join());
    }

    List<SpanData> clientSpans =
        exporter.getFinishedSpanItems().stream()
            .filter(s -> s.getName().equals("client query"))
            .toList();
    assertThat(clientSpans).hasSize(2);
    for (SpanData client : clientSpans) {
      SpanData parent = spanById(client.getParentSpanId());
      assertThat(parent.getName()).isEqualTo("once store claim");
    }
  }

  private SpanData spanById(String spanId) {
    return exporter.getFinishedSpanItems().stream()
        .filter(s -> s.getSpanId().equals(spanId))
        .findFirst()
        .orElseThrow();
  }
}
