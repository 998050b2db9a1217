package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.FinalFailure;
import dev.once.spring.methods.FakePaymentsApplication;
import dev.once.spring.methods.Payments;
import dev.once.spring.methods.Payments.Order;
import dev.once.spring.methods.Payments.Receipt;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.springframework.aop.support.AopUtils;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import reactor.core.publisher.Mono;
import reactor.test.StepVerifier;

/**
 * {@code @Idempotent(key = ...)} on bean methods, in a service without a web server; each subclass
 * supplies the store. Every test uses fresh keys and counts the effects that really happened.
 */
@SpringBootTest(
    classes = FakePaymentsApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.NONE)
@Timeout(60)
abstract class IdempotentMethodsContract {

  @Autowired Payments payments;

  private final ExecutorService threads = Executors.newFixedThreadPool(2);

  @AfterEach
  void stopThreads() {
    threads.shutdownNow();
  }

  private static String newId() {
    return "order-" + UUID.randomUUID();
  }

  private int charges() {
    return payments.charges();
  }

  @Test
  void theServiceIsProxied() {
    assertThat(AopUtils.isAopProxy(payments)).isTrue();
  }

  @Test
  void aSecondCallReplaysTheFirstResultWithoutRunningTheMethod() {
    Order order = new Order(newId(), 1250, "EUR");
    int before = charges();

    Receipt first = payments.charge(order);
    Receipt second = payments.charge(order);

    assertThat(second).isEqualTo(first);
    assertThat(charges()).isEqualTo(before + 1);
  }

  @Test
  void otherFingerprintedArgumentsWithTheSameKeyAreRefused() {
    String id = newId();
    payments.charge(new Order(id, 1250, "EUR"));
    int before = charges();

    assertThatThrownBy(() -> payments.charge(new Order(id, 9999, "EUR")))
        .isInstanceOf(IdempotencyKeyReusedException.class)
        .hasMessageContaining("Payments#charge")
        .hasMessageNotContaining(id);
    assertThat(charges()).isEqualTo(before);
  }

  @Test
  void aVoidMethodRunsOnce() {
    String id = newId();
    int before = charges();

    payments.refund(id);
    payments.refund(id);

    assertThat(charges()).isEqualTo(before + 1);
    assertThat(payments.refunded(id)).isTrue();
  }

  @Test
  void aGenericResultComesBackAsItsDeclaredType() {
    String batch = newId();
    List<Order> orders = List.of(new Order("a", 1, "EUR"), new Order("b", 2, "EUR"));

    List<Receipt> first = payments.chargeAll(batch, orders);
    List<Receipt> replayed = payments.chargeAll(batch, orders);

    assertThat(replayed)
        .isEqualTo(first)
        .allSatisfy(r -> assertThat(r).isInstanceOf(Receipt.class));
  }

  @Test
  void aNullKeyClaimsNothingAndDoesNotRun() {
    int before = charges();

    assertThatThrownBy(() -> payments.charge(new Order(null, 1, "EUR")))
        .isInstanceOf(IdempotencyKeyInvalidException.class)
        .hasMessageContaining("#order.id");
    assertThat(charges()).isEqualTo(before);
  }

  @Test
  void anExpressionThatFailsOnTheArgumentsIsATypedErrorNamingIt() {
    int before = charges();

    assertThatThrownBy(() -> payments.badExpression(new Order(newId(), 1, "EUR")))
        .isInstanceOf(IdempotencyKeyInvalidException.class)
        .hasMessageContaining("#order.customer")
        .hasMessageContaining("Payments#badExpression");
    assertThat(charges()).isEqualTo(before);
  }

  @Test
  void aFinalExceptionIsRecordedAndThrownAgainAsTheSameType() {
    String id = newId();
    int before = charges();

    assertThatThrownBy(() -> payments.declined(id))
        .isExactlyInstanceOf(Payments.Declined.class)
        .hasMessage("card declined for this order");
    assertThatThrownBy(() -> payments.declined(id))
        .isExactlyInstanceOf(Payments.Declined.class)
        .hasMessage("card declined for this order");
    assertThat(charges()).isEqualTo(before + 1);
  }

  @Test
  void aFinalFailureIsReplayedWithItsCode() {
    String id = newId();
    int before = charges();

    assertThatThrownBy(() -> payments.insufficientFunds(id)).isInstanceOf(FinalFailure.class);
    assertThatThrownBy(() -> payments.insufficientFunds(id))
        .isInstanceOfSatisfying(
            FinalFailure.class,
            f -> {
              assertThat(f.code()).isEqualTo("insufficient-funds");
              assertThat(f.replayed()).isTrue();
            });
    assertThat(charges()).isEqualTo(before + 1);
  }

  @Test
  void aTransientExceptionReleasesTheKeySoTheRetryRuns() throws Exception {
    String id = newId();
    payments.resetAttempts();

    assertThatThrownBy(() -> payments.flaky(id))
        .isExactlyInstanceOf(IOException.class)
        .hasMessage("bank unreachable");
    Receipt retried = payments.flaky(id);

    assertThat(payments.flaky(id)).isEqualTo(retried);
    assertThat(payments.attempts()).isEqualTo(2);
  }

  @Test
  void aDuplicateWhileTheFirstRunsIsRefusedAndTheEffectHappensOnce() throws Exception {
    String id = newId();
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    int before = charges();

    Future<Receipt> first = threads.submit(() -> payments.slow(id, entered, release));
    assertThat(entered.await(20, TimeUnit.SECONDS)).isTrue();
    Future<Receipt> duplicate =
        threads.submit(() -> payments.slow(id, new CountDownLatch(1), new CountDownLatch(0)));

    assertThatThrownBy(() -> duplicate.get(20, TimeUnit.SECONDS))
        .hasCauseInstanceOf(IdempotencyInFlightException.class);
    release.countDown();
    Receipt receipt = first.get(20, TimeUnit.SECONDS);

    assertThat(payments.slow(id, new CountDownLatch(1), new CountDownLatch(0))).isEqualTo(receipt);
    assertThat(charges()).isEqualTo(before + 1);
  }

  @Test
  void inWaitModeADuplicateGetsTheFirstResult() throws Exception {
    String id = newId();
    CountDownLatch entered = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    int before = charges();

    Future<Receipt> first = threads.submit(() -> payments.slowWaiting(id, entered, release));
    assertThat(entered.await(20, TimeUnit.SECONDS)).isTrue();
    Future<Receipt> duplicate =
        threads.submit(
            () -> payments.slowWaiting(id, new CountDownLatch(1), new CountDownLatch(0)));
    release.countDown();

    assertThat(duplicate.get(20, TimeUnit.SECONDS)).isEqualTo(first.get(20, TimeUnit.SECONDS));
    assertThat(charges()).isEqualTo(before + 1);
  }

  @Test
  void aCompletionStageIsRecordedWhenItCompletes() throws Exception {
    String id = newId();
    CompletableFuture<Void> gate = new CompletableFuture<>();
    int before = charges();

    CompletableFuture<Receipt> first = payments.chargeLater(id, gate);
    // The claim may be answered on a store thread: the duplicate comes once the first runs.
    dev.once.tck.Eventually.assertThat(
        "the first call runs", Duration.ofSeconds(20), () -> charges() == before + 1);
    CompletableFuture<Receipt> duringFirst = payments.chargeLater(id, new CompletableFuture<>());
    assertThatThrownBy(() -> duringFirst.get(20, TimeUnit.SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(IdempotencyInFlightException.class);
    assertThat(first).isNotDone();
    gate.complete(null);
    Receipt receipt = first.get(20, TimeUnit.SECONDS);

    assertThat(payments.chargeLater(id, new CompletableFuture<>()).get(20, TimeUnit.SECONDS))
        .isEqualTo(receipt);
    assertThat(charges()).isEqualTo(before + 1);
  }

  @Test
  void aFailedStageWithAFinalExceptionIsReplayedAsThatException() {
    String id = newId();
    int before = charges();

    assertThatThrownBy(() -> payments.declinedLater(id).get(20, TimeUnit.SECONDS))
        .hasCauseExactlyInstanceOf(Payments.Declined.class);
    assertThatThrownBy(() -> payments.declinedLater(id).get(20, TimeUnit.SECONDS))
        .hasCauseExactlyInstanceOf(Payments.Declined.class);
    assertThat(charges()).isEqualTo(before + 1);
  }

  @Test
  void aMonoRunsWhenSubscribedAndReplaysAfterwards() {
    String id = newId();
    int before = charges();

    Mono<Receipt> notSubscribed = payments.chargeReactive(id);
    assertThat(charges()).as("nothing runs before subscription").isEqualTo(before);

    Receipt first = notSubscribed.block(java.time.Duration.ofSeconds(20));
    StepVerifier.create(payments.chargeReactive(id)).expectNext(first).verifyComplete();
    StepVerifier.create(notSubscribed).expectNext(first).verifyComplete();
    assertThat(charges()).isEqualTo(before + 1);
  }

  @Test
  void anEmptyMonoReplaysAsEmpty() {
    String id = newId();
    int before = charges();

    StepVerifier.create(payments.nothingReactive(id)).verifyComplete();
    StepVerifier.create(payments.nothingReactive(id)).verifyComplete();
    assertThat(charges()).isEqualTo(before + 1);
  }

  @Test
  void aCallerOfAMethodReturningResultTellsTheFirstRunFromAReplay() {
    String id = newId();
    int before = charges();

    Idempotent.Result<Receipt> first = payments.chargeOrReplay(id);
    Idempotent.Result<Receipt> second = payments.chargeOrReplay(id);

    assertThat(first.replayed()).isFalse();
    assertThat(second.replayed()).isTrue();
    assertThat(second.value()).isEqualTo(first.value());
    assertThat(charges()).isEqualTo(before + 1);
  }

  @Test
  void aResultRecordsTheValueAloneSoTheMethodMayStopTellingWithoutLosingItsRecords() {
    String id = newId();

    Idempotent.Result<Receipt> told = payments.chargeOrReplay(id);

    assertThat(payments.chargeValueOnly(id)).isEqualTo(told.value());
  }

  @Test
  void aMethodCannotClaimItsOwnRunWasAReplay() {
    assertThat(payments.chargeClaimingReplay(newId()).replayed()).isFalse();
  }

  @Test
  void aStageOfResultTellsTheFirstRunFromAReplay() throws Exception {
    String id = newId();
    int before = charges();

    Idempotent.Result<Receipt> first = payments.chargeLaterOrReplay(id).get(20, TimeUnit.SECONDS);
    Idempotent.Result<Receipt> second = payments.chargeLaterOrReplay(id).get(20, TimeUnit.SECONDS);

    assertThat(first.replayed()).isFalse();
    assertThat(second).isEqualTo(new Idempotent.Result<>(first.value(), true));
    assertThat(charges()).isEqualTo(before + 1);
  }

  @Test
  void aMonoOfResultTellsTheFirstRunFromAReplay() {
    String id = newId();
    int before = charges();

    Idempotent.Result<Receipt> first =
        payments.chargeReactiveOrReplay(id).block(Duration.ofSeconds(20));

    assertThat(first).isNotNull();
    assertThat(first.replayed()).isFalse();
    StepVerifier.create(payments.chargeReactiveOrReplay(id))
        .expectNext(new Idempotent.Result<>(first.value(), true))
        .verifyComplete();
    assertThat(charges()).isEqualTo(before + 1);
  }
}
