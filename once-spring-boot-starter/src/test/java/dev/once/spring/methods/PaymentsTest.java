package dev.once.spring.methods;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.spring.Idempotent;
import dev.once.spring.methods.Payments.Receipt;
import dev.once.store.InMemoryStore;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * docs/testing.md, as a user writes it: the page shows this class from {@code @SpringBootTest} on
 * ({@code TestingPageTest} checks that it does). Its two tests use the same key, so whichever runs
 * second fails unless the records are cleared in between.
 */
// testing.md:begin
@SpringBootTest(properties = "once.store.type=memory")
class PaymentsTest {

  @Autowired Payments payments;
  @Autowired InMemoryStore onceStore;

  @BeforeEach
  void forgetEveryKey() {
    onceStore.clear(); // each test starts with no records, whatever ran before it
  }

  @Test
  void aRetryIsAnsweredFromTheRecord() {
    Idempotent.Result<Receipt> first = payments.chargeOrReplay("order-1");
    Idempotent.Result<Receipt> retry = payments.chargeOrReplay("order-1");

    assertThat(first.replayed()).isFalse();
    assertThat(retry.replayed()).isTrue();
    assertThat(retry.value()).isEqualTo(first.value());
  }

  @Test
  void theSameKeyInAnotherTestRunsAfresh() {
    assertThat(payments.chargeOrReplay("order-1").replayed()).isFalse();
  }
}
// testing.md:end
