package dev.once.outbox;

import dev.once.internal.Arguments;
import java.time.Duration;

/** What one attempt to deliver a message came to; the relay records it on the row. */
public sealed interface DeliveryOutcome {

  /** Calls the visitor's method for this variant: a new variant fails to compile until handled. */
  <R> R accept(Visitor<R> visitor);

  /** One method per variant of {@link DeliveryOutcome}. */
  interface Visitor<R> {
    R delivered(Delivered delivered);

    R retry(Retry retry);

    R dead(Dead dead);
  }

  /** The destination accepted the message: the row becomes DELIVERED. */
  record Delivered() implements DeliveryOutcome {
    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.delivered(this);
    }
  }

  /**
   * Worth trying again (a network failure, 5xx, 429, 409 in flight): the row waits for its backoff,
   * or for {@code notBefore} if the destination asked for longer (HTTP {@code Retry-After}), and
   * becomes DEAD when its attempts are used up.
   *
   * @param reason for the row's {@code last_error} and logs; never a body
   * @param notBefore the least wait the destination asked for, or {@link Duration#ZERO}
   */
  record Retry(String reason, Duration notBefore) implements DeliveryOutcome {
    public Retry {
      if (reason == null || notBefore == null || notBefore.isNegative()) {
        throw new IllegalArgumentException(
            "reason must be given and notBefore must be zero or positive");
      }
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.retry(this);
    }
  }

  /**
   * Trying again cannot help (a 4xx other than 408/409/429, an unknown topic): the row becomes
   * DEAD.
   */
  record Dead(String reason) implements DeliveryOutcome {
    public Dead {
      Arguments.present("reason", reason);
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.dead(this);
    }
  }

  /** The shared {@link Delivered} value. */
  DeliveryOutcome DELIVERED = new Delivered();

  static DeliveryOutcome retry(String reason) {
    return new Retry(reason, Duration.ZERO);
  }

  static DeliveryOutcome dead(String reason) {
    return new Dead(reason);
  }
}
