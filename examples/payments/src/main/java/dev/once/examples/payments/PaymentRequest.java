package dev.once.examples.payments;

import org.jspecify.annotations.Nullable;

/**
 * The body of {@code POST /api/payments}.
 *
 * @param amount in minor units (cents), positive
 * @param currency ISO 4217 code, e.g. EUR
 * @param source the wallet debited
 * @param destination the wallet credited
 */
public record PaymentRequest(Long amount, String currency, String source, String destination) {

  /** Why the request cannot be a payment, or null if it can. */
  @Nullable String problem() {
    if (amount == null || amount <= 0 || amount > 1_000_000_000_000L) {
      return "amount must be a positive number of minor units, at most 10^12";
    }
    if (currency == null || !currency.matches("[A-Z]{3}")) {
      return "currency must be an ISO 4217 code such as EUR";
    }
    if (source == null || source.isBlank() || destination == null || destination.isBlank()) {
      return "source and destination must name wallets";
    }
    return source.equals(destination) ? "source and destination must differ" : null;
  }
}
