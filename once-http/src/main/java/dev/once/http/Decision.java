package dev.once.http;

import java.util.Objects;

/**
 * What {@link HttpIdempotency#begin} decided for one request. Take it apart with {@link
 * #accept(Visitor)}, so that an adapter cannot let a decision it does not know run the handler
 * unguarded.
 */
public sealed interface Decision {

  /**
   * One method per variant of {@link Decision}. It has no default methods on purpose: a new variant
   * adds a method here, and every adapter stops compiling until it handles it.
   *
   * @param <R> what the visit answers
   */
  interface Visitor<R> {
    R passThrough(PassThrough passThrough);

    R respond(Respond respond);

    R proceed(Proceed proceed);
  }

  /** Calls the visitor's method for this variant and answers what it answers. */
  <R> R accept(Visitor<R> visitor);

  /** Why a request passes through without protection. */
  enum Reason {
    /** The method is not covered on this route. */
    NOT_COVERED,
    /** No key, and the route does not require one. */
    NO_KEY,
    /** The store is down and the route is fail-open. */
    FAIL_OPEN
  }

  /** Handle the request normally; nothing is recorded. */
  record PassThrough(Reason reason) implements Decision {
    public PassThrough {
      Objects.requireNonNull(reason, "reason");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.passThrough(this);
    }
  }

  /**
   * Answer with this response without running the handler: a problem (400, 409, 413, 422, 503) or
   * the replay of the recorded response (marked {@code Idempotent-Replayed: true}).
   */
  record Respond(StoredResponse response, boolean replayed) implements Decision {
    public Respond {
      Objects.requireNonNull(response, "response");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.respond(this);
    }
  }

  /** Run the handler, then finish the exchange exactly once with its response. */
  record Proceed(Exchange exchange) implements Decision {
    public Proceed {
      Objects.requireNonNull(exchange, "exchange");
    }

    @Override
    public <R> R accept(Visitor<R> visitor) {
      return visitor.proceed(this);
    }
  }
}
