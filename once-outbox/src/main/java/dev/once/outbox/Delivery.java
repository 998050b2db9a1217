package dev.once.outbox;

import java.util.concurrent.CompletableFuture;

/**
 * Sends claimed messages somewhere: {@link HttpDelivery}, or {@code dev.once.kafka.KafkaDelivery}
 * in once-kafka.
 *
 * <p>A relay starts every message of a batch before it waits for any, so an implementation should
 * return at once and complete the future when the destination answers. It must bound each send by
 * its own timeout, shorter than the relay's {@code deliveryTimeout}: a send still running when the
 * relay stops waiting leaves its row claimed until the lease ends. A future that completes
 * exceptionally counts as a {@link DeliveryOutcome.Retry}.
 */
public interface Delivery extends AutoCloseable {

  /** Starts sending {@code message}; the future completes with what came of it. */
  CompletableFuture<DeliveryOutcome> deliver(PendingMessage message);

  /** Releases what the delivery owns (clients it created); does nothing by default. */
  @Override
  default void close() {}
}
