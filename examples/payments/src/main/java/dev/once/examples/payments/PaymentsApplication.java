package dev.once.examples.payments;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;

/**
 * A Stripe-style payments API: {@code POST /api/payments} moves money between two of a merchant's
 * wallets through a double-entry ledger, exactly once per {@code Idempotency-Key}, whatever the
 * client retries. See {@code docs/spring-boot.md}.
 */
@SpringBootApplication
public class PaymentsApplication {

  public static void main(String[] args) {
    SpringApplication.run(PaymentsApplication.class, args);
  }
}
