package dev.once.examples.payments;

import java.security.SecureRandom;
import java.util.List;
import org.springframework.http.HttpStatus;
import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Moves money between two of a merchant's wallets. It knows nothing about idempotency: the route's
 * policy makes each call happen once per key, and in transactional mode its writes commit in the
 * same transaction as the idempotency record (it joins the transaction the filter opened).
 */
@Service
class Payments {

  /** What a payment request came to. */
  sealed interface Outcome {
    record Paid(Payment payment) implements Outcome {}

    /**
     * A deterministic refusal: the same request would be refused again, so it is recorded and
     * replayed.
     */
    record Refused(HttpStatus status, String type, String title, String detail)
        implements Outcome {}
  }

  private static final String ALPHABET =
      "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  private static final SecureRandom RANDOM = new SecureRandom();

  private final Ledger ledger;

  Payments(Ledger ledger) {
    this.ledger = ledger;
  }

  // Refusals are answers, not exceptions: an exception would roll back the idempotency record too.
  @Transactional
  Outcome pay(String merchant, PaymentRequest request) {
    String invalid = request.problem();
    if (invalid != null) {
      return new Outcome.Refused(
          HttpStatus.UNPROCESSABLE_ENTITY, "invalid-request", "Invalid payment request", invalid);
    }
    List<Ledger.Account> accounts = ledger.lock(merchant, request.source(), request.destination());
    if (accounts.size() != 2) {
      return new Outcome.Refused(
          HttpStatus.NOT_FOUND,
          "wallet-not-found",
          "Wallet not found",
          "source and destination must be wallets of yours");
    }
    Ledger.Account source =
        accounts.get(0).id().equals(request.source()) ? accounts.get(0) : accounts.get(1);
    if (!accounts.stream().allMatch(a -> a.currency().equals(request.currency()))) {
      return new Outcome.Refused(
          HttpStatus.UNPROCESSABLE_ENTITY,
          "currency-mismatch",
          "Currency mismatch",
          "both wallets must hold " + request.currency());
    }
    if (source.balance() < request.amount()) {
      return new Outcome.Refused(
          HttpStatus.PAYMENT_REQUIRED,
          "insufficient-funds",
          "Insufficient funds",
          "the source wallet cannot cover " + request.amount() + " " + request.currency());
    }
    Payment payment =
        new Payment(
            newId(),
            request.amount(),
            request.currency(),
            request.source(),
            request.destination(),
            "succeeded");
    ledger.book(merchant, payment);
    return new Outcome.Paid(payment);
  }

  private static String newId() {
    StringBuilder id = new StringBuilder("pay_");
    for (int i = 0; i < 24; i++) {
      id.append(ALPHABET.charAt(RANDOM.nextInt(ALPHABET.length())));
    }
    return id.toString();
  }
}
