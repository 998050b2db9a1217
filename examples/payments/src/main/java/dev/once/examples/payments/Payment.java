package dev.once.examples.payments;

import com.fasterxml.jackson.annotation.JsonProperty;

/** A payment as the API shows it. */
public record Payment(
    @JsonProperty("payment_id") String id,
    long amount,
    String currency,
    String source,
    String destination,
    String status) {}
