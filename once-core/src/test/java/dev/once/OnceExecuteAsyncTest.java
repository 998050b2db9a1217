package dev.once;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.store.InMemoryStore;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** {@link Once#executeAsync}: the rules of {@link Once#execute}, without a thread waiting. */
@Timeout(30)
class OnceExecuteAsyncTest {

  private static final Scope SCOPE = Scope.of("merchant-1", "async");
  private static final Fingerprint FP = new Fingerprint(1, "aa".repeat(32));

  private final InMemoryStore store = InMemoryStore.create();
  private final Once once = Once.of(store);
  private final AtomicInteger runs = new AtomicInteger();

  @AfterEach
  void close() {
    once.close();
    store.close();
  }

  private static IdempotencyKey newKey() {
    return IdempotencyKey.of(UUID.randomUUID().toString());
  }

  private ExecutionResult<String> run(
      IdempotencyKey key,
      ResultCodec<String> codec,
      OutcomeClassifier<String> classifier,
      Operation<CompletionStage<String>> operation)
      throws Exception {
    return once.executeAsync(SCOPE, key, FP, codec, classifier, ExecutionPolicy.DEFAULTS, operation)
        .toCompletableFuture()
        .get(10, TimeUnit.SECONDS);
  }

  private ExecutionResult<String> charge(IdempotencyKey key) throws Exception {
    return run(
        key,
        ResultCodec.utf8(),
        OutcomeClassifier.defaults(),
        ctx -> CompletableFuture.completedFuture("charge-" + runs.incrementAndGet()));
  }

  @Test
  void aStageThatCompletesLaterIsRecordedAndReplayed() throws Exception {
    IdempotencyKey key = newKey();
    CompletableFuture<String> later = new CompletableFuture<>();
    CompletionStage<ExecutionResult<String>> first =
        once.executeAsync(
            SCOPE,
            key,
            FP,
            ResultCodec.utf8(),
            OutcomeClassifier.defaults(),
            ExecutionPolicy.DEFAULTS,
            ctx -> {
              runs.incrementAndGet();
              return later;
            });

    assertThat(first.toCompletableFuture()).isNotDone();
    assertThat(charge(key)).isInstanceOf(ExecutionResult.InFlight.class);
    later.complete("paid");

    assertThat(first.toCompletableFuture().get(10, TimeUnit.SECONDS))
        .isEqualTo(new ExecutionResult.Executed<>("paid", Outcome.COMPLETED, Recording.RECORDED));
    assertThat(charge(key)).isEqualTo(new ExecutionResult.Replayed<>("paid", Outcome.COMPLETED));
    assertThat(runs).hasValue(1);
  }

  @Test
  void aTransientFailureReleasesTheKeyAndFailsTheStageWithTheOperationsOwnException() {
    IdempotencyKey key = newKey();
    IOException down = new IOException("downstream down");

    assertThatThrownBy(
            () ->
                run(
                    key,
                    ResultCodec.utf8(),
                    OutcomeClassifier.defaults(),
                    ctx -> CompletableFuture.failedFuture(down)))
        .isInstanceOf(ExecutionException.class)
        .hasCause(down);

    assertThat(store.get(RecordId.of(SCOPE, key))).isEmpty();
  }

  @Test
  void aFinalFailureIsRecordedAndReplayed() throws Exception {
    IdempotencyKey key = newKey();
    Operation<CompletionStage<String>> declined =
        ctx -> {
          runs.incrementAndGet();
          return CompletableFuture.failedFuture(new FinalFailure("declined", "card declined"));
        };

    ExecutionResult<String> first =
        run(key, ResultCodec.utf8(), OutcomeClassifier.defaults(), declined);
    ExecutionResult<String> retry =
        run(key, ResultCodec.utf8(), OutcomeClassifier.defaults(), declined);

    assertThat(first).isInstanceOf(ExecutionResult.Failed.class);
    assertThat(((ExecutionResult.Failed<String>) first).failure().replayed()).isFalse();
    assertThat(((ExecutionResult.Failed<String>) retry).failure().code()).isEqualTo("declined");
    assertThat(((ExecutionResult.Failed<String>) retry).failure().replayed()).isTrue();
    assertThat(runs).hasValue(1);
  }

  @Test
  void anOperationThatThrowsBeforeReturningAStageIsClassifiedLikeAFailedStage() {
    IdempotencyKey key = newKey();

    assertThatThrownBy(
            () ->
                run(
                    key,
                    ResultCodec.utf8(),
                    OutcomeClassifier.defaults(),
                    ctx -> {
                      throw new IllegalStateException("no connection");
                    }))
        .hasCauseInstanceOf(IllegalStateException.class);

    assertThat(store.get(RecordId.of(SCOPE, key))).isEmpty();
  }

  @Test
  void aResultThatCannotBeEncodedCountsAsDone() throws Exception {
    IdempotencyKey key = newKey();
    ResultCodec<String> broken =
        new ResultCodec<>() {
          @Override
          public byte[] encode(String value) {
            throw new IllegalStateException("not serialisable");
          }

          @Override
          public String decode(byte[] bytes) {
            return new String(bytes, StandardCharsets.UTF_8);
          }
        };
    Operation<CompletionStage<String>> op =
        ctx -> CompletableFuture.completedFuture("v" + runs.incrementAndGet());

    ExecutionResult<String> first = run(key, broken, OutcomeClassifier.defaults(), op);
    ExecutionResult<String> retry = run(key, broken, OutcomeClassifier.defaults(), op);

    assertThat(first)
        .isEqualTo(
            new ExecutionResult.Executed<>("v1", Outcome.COMPLETED, Recording.RESULT_NOT_STORED));
    assertThat(retry).isInstanceOf(ExecutionResult.ResponseUnavailable.class);
    assertThat(runs).hasValue(1);
  }

  @Test
  void aClassifierThatFailsOnAnErrorAbandonsTheLease() {
    IdempotencyKey key = newKey();
    OutcomeClassifier<String> broken =
        new OutcomeClassifier<>() {
          @Override
          public Outcome classifyError(Throwable error) {
            throw new IllegalStateException("classifier bug");
          }
        };

    assertThatThrownBy(
            () ->
                run(
                    key,
                    ResultCodec.utf8(),
                    broken,
                    ctx -> CompletableFuture.failedFuture(new IOException("timeout"))))
        .hasCauseInstanceOf(IOException.class);

    assertThat(store.get(RecordId.of(SCOPE, key)).orElseThrow().state())
        .isEqualTo(RecordState.IN_PROGRESS);
  }

  @Test
  void aTransientValueReleasesTheKey() throws Exception {
    IdempotencyKey key = newKey();
    OutcomeClassifier<String> busy =
        new OutcomeClassifier<>() {
          @Override
          public Outcome classify(String result) {
            return Outcome.TRANSIENT;
          }
        };

    ExecutionResult<String> r =
        run(key, ResultCodec.utf8(), busy, ctx -> CompletableFuture.completedFuture("busy"));

    assertThat(r)
        .isEqualTo(new ExecutionResult.Executed<>("busy", Outcome.TRANSIENT, Recording.RELEASED));
    assertThat(store.get(RecordId.of(SCOPE, key))).isEmpty();
  }
}
