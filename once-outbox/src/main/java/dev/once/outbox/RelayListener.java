package dev.once.outbox;

import java.time.Duration;

/**
 * Hooks for metrics and logs, called on relay threads; they must be quick and must not throw. Every
 * method does nothing by default, so a listener overrides only what it counts.
 */
public interface RelayListener {

  /** A listener that does nothing. */
  RelayListener NONE = new RelayListener() {};

  /** A relay claimed {@code count} due messages (at least one). */
  default void onClaimed(int count) {}

  /** {@code message} was delivered; {@code elapsed} is the send's own time. */
  default void onDelivered(PendingMessage message, Duration elapsed) {}

  /** {@code message} will be tried again after {@code delay}. */
  default void onRetry(PendingMessage message, String reason, Duration delay) {}

  /** {@code message} is DEAD: its attempts are used up, or trying again cannot help. */
  default void onDead(PendingMessage message, String reason) {}

  /**
   * Another relay took {@code message} over (this relay's lease ended before it recorded the
   * outcome), or it was already recorded; this relay's outcome was dropped.
   */
  default void onLeaseLost(PendingMessage message) {}

  /** {@code count} delivered rows older than the retention were deleted. */
  default void onPurged(int count) {}

  /** The relay's database work failed; it backs off for one poll interval and carries on. */
  default void onError(Exception error) {}
}
