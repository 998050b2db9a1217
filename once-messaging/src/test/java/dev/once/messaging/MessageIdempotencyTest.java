package dev.once.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.ExecutionPolicy;
import dev.once.FailureMode;
import dev.once.FakeUnavailableStore;
import dev.once.FinalFailure;
import dev.once.IdempotencyKey;
import dev.once.InFlightPolicy;
import dev.once.Once;
import dev.once.Outcome;
import dev.once.OutcomeClassifier;
import dev.once.Scope;
import dev.once.messaging.Acknowledgement.Ack;
import dev.once.messaging.Acknowledgement.AckReason;
import dev.once.messaging.Acknowledgement.DeadLetter;
import dev.once.messaging.Acknowledgement.Redeliver;
import dev.once.messaging.Acknowledgement.RedeliverReason;
import dev.once.messaging.Acknowledgement.Reject;
import dev.once.messaging.Acknowledgement.RejectReason;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class MessageIdempotencyTest {

  private static final Scope SCOPE = Scope.of("billing", "orders");

  private final IdempotencyStore store = InMemoryStore.create();
  private final Once once = Once.of(store);
  private final AtomicInteger effects = new AtomicInteger();
  private final MessageHandler<TestMessage> count = (m, ctx) -> effects.incrementAndGet();

  @AfterEach
  void close() {
    once.close();
  }

  private MessageIdempotency.Builder<TestMessage> builder() {
    return MessageIdempotency.builder(once, TestMessage.READER).scope(SCOPE);
  }

  private static String newKey() {
    return "order-" + UUID.randomUUID();
  }

  private RecordState stateOf(String key) {
    return store.get(RecordId.of(SCOPE, IdempotencyKey.of(key))).map(r -> r.state()).orElse(null);
  }

  @Test
  void firstDeliveryRunsTheHandlerAndIsAcknowledged() {
    String key = newKey();

    Acknowledgement a = builder().build().process(TestMessage.keyed(key, "{}"), count);

    assertThat(a).isEqualTo(new Ack(AckReason.PROCESSED));
    assertThat(effects).hasValue(1);
    assertThat(stateOf(key)).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void redeliveryIsAcknowledgedAsDuplicateWithoutRunning() {
    MessageIdempotency<TestMessage> messages = builder().build();
    TestMessage m = TestMessage.keyed(newKey(), "{}");

    messages.process(m, count);
    Acknowledgement again = messages.process(m, count);

    assertThat(again).isEqualTo(new Ack(AckReason.DUPLICATE));
    assertThat(effects).hasValue(1);
  }

  @Test
  void keyComesFromTheConfiguredHeader() {
    MessageIdempotency<TestMessage> messages =
        builder().key(KeyExtractor.header("order-id")).build();
    TestMessage first = new TestMessage("a", Map.of("order-id", "o-1" + newKey()), new byte[] {1});
    TestMessage sameOrderOtherId = new TestMessage("b", first.headers(), new byte[] {1});

    messages.process(first, count);

    assertThat(messages.process(sameOrderOtherId, count)).isEqualTo(new Ack(AckReason.DUPLICATE));
    assertThat(effects).hasValue(1);
  }

  @Test
  void keyMayBeAFunctionOfTheMessage() {
    String order = newKey();
    MessageIdempotency<TestMessage> messages =
        builder().key(KeyExtractor.of(m -> m.text().split(",")[0])).build();

    messages.process(new TestMessage(null, Map.of(), (order + ",x").getBytes()), count);

    assertThat(stateOf(order)).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void messageWithoutKeyFallsBackToItsId() {
    String id = newKey();

    builder().build().process(new TestMessage(id, Map.of(), new byte[0]), count);

    assertThat(stateOf(id)).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void messageWithoutKeyIsRejectedWhenTheFallbackIsOff() {
    Acknowledgement a =
        builder()
            .messageIdFallback(false)
            .build()
            .process(new TestMessage(newKey(), Map.of(), new byte[0]), count);

    assertThat(a).isInstanceOf(Reject.class);
    assertThat(((Reject) a).reason()).isEqualTo(RejectReason.KEY_MISSING);
    assertThat(effects).hasValue(0);
  }

  @Test
  void messageWithNeitherKeyNorIdIsRejected() {
    Acknowledgement a =
        builder().build().process(new TestMessage(null, Map.of(), new byte[0]), count);

    assertThat(((Reject) a).reason()).isEqualTo(RejectReason.KEY_MISSING);
  }

  @Test
  void invalidKeyIsRejectedLeavingNothingBehind() {
    Acknowledgement a = builder().build().process(TestMessage.keyed("has space", "{}"), count);

    assertThat(a).isInstanceOf(Reject.class);
    assertThat(((Reject) a).reason()).isEqualTo(RejectReason.KEY_INVALID);
    assertThat(((Reject) a).detail()).contains("printable ASCII");
    assertThat(effects).hasValue(0);
  }

  @Test
  void reusedKeyWithADifferentPayloadIsRejectedAndNeverRuns() {
    MessageIdempotency<TestMessage> messages = builder().build();
    String key = newKey();
    messages.process(TestMessage.keyed(key, "{\"amount\":1}"), count);

    Acknowledgement a = messages.process(TestMessage.keyed(key, "{\"amount\":2}"), count);

    assertThat(((Reject) a).reason()).isEqualTo(RejectReason.KEY_REUSED);
    assertThat(effects).hasValue(1);
  }

  @Test
  void customFingerprintDecidesWhatCountsAsTheSamePayload() {
    MessageIdempotency<TestMessage> messages =
        builder()
            .fingerprint(m -> dev.once.fingerprint.Fingerprinter.defaults().json(m.payload()))
            .build();
    String key = newKey();
    messages.process(TestMessage.keyed(key, "{\"a\":1,\"b\":2}"), count);

    assertThat(messages.process(TestMessage.keyed(key, "{ \"b\": 2, \"a\": 1.0 }"), count))
        .isEqualTo(new Ack(AckReason.DUPLICATE));
  }

  @Test
  void duplicateWhileTheFirstIsInFlightIsRedeliveredAfterTheConfiguredDelay() throws Exception {
    MessageIdempotency<TestMessage> messages =
        builder().inFlightRedeliveryDelay(Duration.ofMillis(250)).build();
    TestMessage m = TestMessage.keyed(newKey(), "{}");
    CountDownLatch running = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Acknowledgement> first =
          pool.submit(
              () ->
                  messages.process(
                      m,
                      (msg, ctx) -> {
                        running.countDown();
                        release.await(30, TimeUnit.SECONDS);
                        effects.incrementAndGet();
                      }));
      assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();

      Acknowledgement duplicate = messages.process(m, count);

      assertThat(duplicate)
          .isEqualTo(new Redeliver(Duration.ofMillis(250), RedeliverReason.IN_FLIGHT, null));
      release.countDown();
      assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo(new Ack(AckReason.PROCESSED));
      assertThat(messages.process(m, count)).isEqualTo(new Ack(AckReason.DUPLICATE));
      assertThat(effects).hasValue(1);
    } finally {
      release.countDown();
      pool.shutdownNow();
    }
  }

  @Test
  void inFlightDuplicateWaitsAndIsAcknowledgedWhenThePolicyWaits() throws Exception {
    MessageIdempotency<TestMessage> messages =
        builder()
            .policy(
                ExecutionPolicy.builder()
                    .inFlight(InFlightPolicy.waitUpTo(Duration.ofSeconds(30)))
                    .build())
            .build();
    TestMessage m = TestMessage.keyed(newKey(), "{}");
    CountDownLatch running = new CountDownLatch(1);
    ExecutorService pool = Executors.newSingleThreadExecutor();
    try {
      Future<Acknowledgement> first =
          pool.submit(
              () ->
                  messages.process(
                      m,
                      (msg, ctx) -> {
                        running.countDown();
                        Thread.sleep(200);
                        effects.incrementAndGet();
                      }));
      assertThat(running.await(30, TimeUnit.SECONDS)).isTrue();

      assertThat(messages.process(m, count)).isEqualTo(new Ack(AckReason.DUPLICATE));
      assertThat(first.get(30, TimeUnit.SECONDS)).isEqualTo(new Ack(AckReason.PROCESSED));
      assertThat(effects).hasValue(1);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void transientFailureReleasesTheKeySoTheRedeliveryRunsOnce() {
    MessageIdempotency<TestMessage> messages = builder().retryDelay(Duration.ofSeconds(3)).build();
    String key = newKey();
    TestMessage m = TestMessage.keyed(key, "{}");
    AtomicInteger attempts = new AtomicInteger();
    MessageHandler<TestMessage> flaky =
        (msg, ctx) -> {
          if (attempts.incrementAndGet() == 1) {
            throw new java.io.IOException("downstream timed out");
          }
          effects.incrementAndGet();
        };

    Acknowledgement first = messages.process(m, flaky);

    assertThat(first).isInstanceOf(Redeliver.class);
    Redeliver r = (Redeliver) first;
    assertThat(r.reason()).isEqualTo(RedeliverReason.TRANSIENT_FAILURE);
    assertThat(r.delay()).isEqualTo(Duration.ofSeconds(3));
    assertThat(r.cause()).hasMessage("downstream timed out");
    assertThat(stateOf(key)).isNull();

    assertThat(messages.process(m, flaky)).isEqualTo(new Ack(AckReason.PROCESSED));
    assertThat(messages.process(m, flaky)).isEqualTo(new Ack(AckReason.DUPLICATE));
    assertThat(effects).hasValue(1);
    assertThat(attempts).hasValue(2);
  }

  @Test
  void finalFailureIsRecordedDeadLetteredOnceAndItsDuplicatesAcknowledged() {
    MessageIdempotency<TestMessage> messages = builder().build();
    String key = newKey();
    TestMessage m = TestMessage.keyed(key, "{}");
    AtomicInteger attempts = new AtomicInteger();
    MessageHandler<TestMessage> refusing =
        (msg, ctx) -> {
          attempts.incrementAndGet();
          throw new FinalFailure("unknown-customer", "customer 42 does not exist");
        };

    Acknowledgement first = messages.process(m, refusing);

    assertThat(first).isInstanceOf(DeadLetter.class);
    assertThat(((DeadLetter) first).failure().code()).isEqualTo("unknown-customer");
    assertThat(stateOf(key)).isEqualTo(RecordState.FAILED_FINAL);
    assertThat(messages.process(m, refusing)).isEqualTo(new Ack(AckReason.DUPLICATE));
    assertThat(attempts).hasValue(1);
  }

  @Test
  void classifierDecidesWhichExceptionsAreFinal() {
    MessageIdempotency<TestMessage> messages =
        builder()
            .classifier(
                new OutcomeClassifier<>() {
                  @Override
                  public Outcome classifyError(Throwable error) {
                    return error instanceof IllegalArgumentException
                        ? Outcome.FAILED_FINAL
                        : Outcome.TRANSIENT;
                  }
                })
            .build();

    Acknowledgement a =
        messages.process(
            TestMessage.keyed(newKey(), "{}"),
            (m, ctx) -> {
              throw new IllegalArgumentException("bad amount");
            });

    assertThat(((DeadLetter) a).failure().code())
        .isEqualTo(IllegalArgumentException.class.getName());
    assertThat(((DeadLetter) a).failure().getMessage()).isEqualTo("bad amount");
  }

  @Test
  void aClassifierThatThrowsAbandonsTheLeaseInsteadOfHoldingItForever() {
    MessageIdempotency<TestMessage> messages =
        withAClassifierThatThrows(() -> new IllegalStateException("classifier bug"));
    String key = newKey();
    RecordId id = RecordId.of(SCOPE, IdempotencyKey.of(key));

    Acknowledgement a =
        messages.process(
            TestMessage.keyed(key, "{}"),
            (m, ctx) -> {
              throw new IllegalArgumentException("handler failed");
            });

    assertThat(a).isInstanceOf(Redeliver.class);
    assertThat(((Redeliver) a).reason()).isEqualTo(RedeliverReason.TRANSIENT_FAILURE);
    assertThat(((Redeliver) a).cause().getSuppressed())
        .extracting(Throwable::getMessage)
        .contains("classifier bug");
    assertAbandonedNotReleased(key, id);
  }

  /**
   * A classifier that throws an {@code Error} (an {@code AssertionError}, Kotlin's {@code TODO()})
   * abandons the lease before the Error propagates: it is never left in flight under heartbeats
   * until the engine closes.
   */
  @Test
  void aClassifierThatThrowsAnErrorAbandonsTheLeaseBeforeTheErrorPropagates() {
    MessageIdempotency<TestMessage> messages =
        withAClassifierThatThrows(() -> new AssertionError("classifier bug"));
    String key = newKey();
    RecordId id = RecordId.of(SCOPE, IdempotencyKey.of(key));

    assertThatThrownBy(
            () ->
                messages.process(
                    TestMessage.keyed(key, "{}"),
                    (m, ctx) -> {
                      throw new IllegalArgumentException("handler failed");
                    }))
        .isInstanceOf(AssertionError.class)
        .hasMessage("classifier bug");
    assertAbandonedNotReleased(key, id);
  }

  /** Short leases, and a classifier that throws what {@code bug} makes. */
  private MessageIdempotency<TestMessage> withAClassifierThatThrows(
      java.util.function.Supplier<? extends Throwable> bug) {
    return builder()
        .policy(ExecutionPolicy.builder().lease(Duration.ofMillis(300)).build())
        .classifier(
            new OutcomeClassifier<>() {
              @Override
              public Outcome classifyError(Throwable error) {
                Throwable thrown = bug.get();
                if (thrown instanceof Error e) {
                  throw e;
                }
                throw (RuntimeException) thrown;
              }
            })
        .build();
  }

  /** Not released (the effect is unknown), and no longer heartbeated: the lease ends on its own. */
  private void assertAbandonedNotReleased(String key, RecordId id) {
    assertThat(stateOf(key)).isEqualTo(RecordState.IN_PROGRESS);
    dev.once.tck.Eventually.assertThat(
        "the abandoned lease ended",
        Duration.ofSeconds(10),
        () -> store.get(id).map(r -> r.isStealable()).orElse(false));
  }

  @Test
  void storeUnavailableRedeliversWithoutRunning() {
    FakeUnavailableStore down = new FakeUnavailableStore();
    try (Once broken = Once.of(down)) {
      Acknowledgement a =
          MessageIdempotency.builder(broken, TestMessage.READER)
              .scope(SCOPE)
              .build()
              .process(TestMessage.keyed(newKey(), "{}"), count);

      assertThat(a).isInstanceOf(Redeliver.class);
      assertThat(((Redeliver) a).reason()).isEqualTo(RedeliverReason.STORE_UNAVAILABLE);
      assertThat(((Redeliver) a).delay()).isEqualTo(ExecutionPolicy.DEFAULTS.storeRetryAfter());
      assertThat(effects).hasValue(0);
    }
  }

  @Test
  void storeUnavailableRunsUnguardedWhenThePolicyFailsOpen() {
    try (Once broken = Once.of(new FakeUnavailableStore())) {
      Acknowledgement a =
          MessageIdempotency.builder(broken, TestMessage.READER)
              .scope(SCOPE)
              .policy(ExecutionPolicy.builder().failureMode(FailureMode.FAIL_OPEN).build())
              .build()
              .process(TestMessage.keyed(newKey(), "{}"), count);

      assertThat(a).isEqualTo(new Ack(AckReason.UNGUARDED));
      assertThat(effects).hasValue(1);
    }
  }

  @Test
  void redeliveryAfterAConsumerDiedMidHandlerTakesOverOnceTheLeaseEnds() throws Exception {
    MessageIdempotency<TestMessage> messages =
        builder()
            .policy(
                ExecutionPolicy.builder().lease(Duration.ofMillis(300)).heartbeat(false).build())
            .build();
    String key = newKey();
    TestMessage m = TestMessage.keyed(key, "{}");
    // A consumer that claimed the key and died: its lease is never finished.
    once.begin(
        SCOPE,
        IdempotencyKey.of(key),
        dev.once.fingerprint.Fingerprinter.defaults().raw(m.payload(), "message"),
        messages.policy());

    assertThat(messages.process(m, count)).isInstanceOf(Redeliver.class);
    List<Boolean> stolen = new ArrayList<>();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    Acknowledgement a;
    do {
      Thread.sleep(50);
      a =
          messages.process(
              m,
              (msg, ctx) -> {
                stolen.add(ctx.stolen());
                effects.incrementAndGet();
              });
    } while (a instanceof Redeliver && System.nanoTime() < deadline);

    assertThat(a).isEqualTo(new Ack(AckReason.PROCESSED));
    assertThat(stolen).containsExactly(true);
  }

  @Test
  void fiftyDeliveriesAcrossFourConsumersHaveOneEffect() throws Exception {
    MessageIdempotency<TestMessage> messages = builder().build();
    TestMessage m = TestMessage.keyed(newKey(), "{}");
    ExecutorService consumers = Executors.newFixedThreadPool(4);
    ConcurrentLinkedQueue<Acknowledgement> acks = new ConcurrentLinkedQueue<>();
    CountDownLatch start = new CountDownLatch(1);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (int i = 0; i < 50; i++) {
        done.add(
            consumers.submit(
                () -> {
                  start.await();
                  // A consumer keeps redelivering its copy until it is acknowledged.
                  for (int attempt = 0; attempt < 1_000; attempt++) {
                    Acknowledgement a =
                        messages.process(
                            m,
                            (msg, ctx) -> {
                              Thread.sleep(5);
                              effects.incrementAndGet();
                            });
                    acks.add(a);
                    if (a instanceof Ack) {
                      return null;
                    }
                    Thread.sleep(2);
                  }
                  throw new AssertionError("never acknowledged");
                }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      consumers.shutdownNow();
    }

    assertThat(effects).hasValue(1);
    assertThat(acks.stream().filter(a -> a.equals(new Ack(AckReason.PROCESSED)))).hasSize(1);
    assertThat(acks.stream().filter(a -> a.equals(new Ack(AckReason.DUPLICATE)))).hasSize(49);
  }

  @Test
  void twoScopesEachProcessTheSameMessage() {
    TestMessage m = TestMessage.keyed(newKey(), "{}");

    builder().build().process(m, count);
    Acknowledgement other =
        builder().scope(Scope.of("shipping", "orders")).build().process(m, count);

    assertThat(other).isEqualTo(new Ack(AckReason.PROCESSED));
    assertThat(effects).hasValue(2);
  }

  @Test
  void scopeMayComeFromTheMessage() {
    TestMessage m =
        new TestMessage(
            "x", Map.of(KeyExtractor.DEFAULT_HEADER, newKey(), "tenant", "t-7"), new byte[0]);
    String key = m.headers().get(KeyExtractor.DEFAULT_HEADER);

    builder()
        .scope(msg -> Scope.of(msg.headers().get("tenant"), "orders"))
        .build()
        .process(m, count);

    assertThat(store.get(RecordId.of(Scope.of("t-7", "orders"), IdempotencyKey.of(key))))
        .isPresent();
  }

  @Test
  void errorFromTheHandlerPropagatesAfterReleasingTheKey() {
    String key = newKey();
    MessageIdempotency<TestMessage> messages = builder().build();

    assertThatThrownBy(
            () ->
                messages.process(
                    TestMessage.keyed(key, "{}"),
                    (m, ctx) -> {
                      throw new StackOverflowError("deep");
                    }))
        .isInstanceOf(StackOverflowError.class);

    assertThat(stateOf(key)).isNull();
  }

  @Test
  void processorBindsTheHandler() {
    MessageProcessor<TestMessage> processor = builder().build().processor(count);

    assertThat(processor.process(TestMessage.keyed(newKey(), "{}")))
        .isEqualTo(new Ack(AckReason.PROCESSED));
  }

  @Test
  void buildWithoutScopeFails() {
    assertThatThrownBy(() -> MessageIdempotency.builder(once, TestMessage.READER).build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("scope is required");
  }

  @Test
  void badOptionsAreRejectedNamingTheOption() {
    assertThatThrownBy(() -> builder().retryDelay(Duration.ofSeconds(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("retryDelay");
    assertThatThrownBy(() -> builder().inFlightRedeliveryDelay(Duration.ofHours(13)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("inFlightRedeliveryDelay");
    assertThatThrownBy(() -> builder().inFlightRedeliveryDelay(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("inFlightRedeliveryDelay");
    assertThatThrownBy(() -> KeyExtractor.header(" "))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("header name");
    assertThatThrownBy(() -> new Redeliver(Duration.ofSeconds(-1), RedeliverReason.IN_FLIGHT, null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("delay");
  }

  @Test
  void nullArgumentsAreRefused() {
    MessageIdempotency<TestMessage> messages = builder().build();

    assertThatThrownBy(() -> messages.process(null, count))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> messages.process(TestMessage.keyed("k", "{}"), null))
        .isInstanceOf(NullPointerException.class);
    assertThatThrownBy(() -> builder().scope((Scope) null))
        .isInstanceOf(NullPointerException.class);
  }
}
