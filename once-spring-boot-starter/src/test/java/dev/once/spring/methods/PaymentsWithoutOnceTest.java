package dev.once.spring.methods;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;

/**
 * docs/testing.md, switching Once off for one test class: the page shows this class from
 * {@code @SpringBootTest} on ({@code TestingPageTest} checks that it does).
 */
// testing.md:begin
@SpringBootTest(properties = "once.enabled=false")
class PaymentsWithoutOnceTest {

  @Autowired Payments payments;

  @Test
  void everyCallRunsTheMethod() {
    int before = payments.charges();

    assertThat(payments.chargeOrReplay("order-1").replayed()).isFalse();
    assertThat(payments.chargeOrReplay("order-1").replayed()).isFalse();
    assertThat(payments.charges()).isEqualTo(before + 2);
  }
}
// testing.md:end
