package dev.once.outbox;

/**
 * A message a relay has claimed and hands to a {@link Delivery}.
 *
 * @param message what was enqueued
 * @param idempotencyKey the key derived from the outbox name and the message id, the same on every
 *     attempt: send it downstream ({@code Idempotency-Key}) so that a retry is deduplicated there
 * @param attempt 1 for the first claim, +1 for each later one (after a retry or an expired lease)
 */
public record PendingMessage(OutboxMessage message, String idempotencyKey, int attempt) {

  public PendingMessage {
    if (message == null || idempotencyKey == null) {
      throw new IllegalArgumentException("message and idempotencyKey must not be null");
    }
    if (attempt < 1) {
      throw new IllegalArgumentException("attempt must be at least 1; was " + attempt);
    }
  }
}
