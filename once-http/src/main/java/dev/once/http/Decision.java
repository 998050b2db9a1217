package dev.once.http;

import java.util.Objects;

/** What {@link HttpIdempotency#begin} decided for one request. */
public sealed interface Decision {

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
  }

  /**
   * Answer with this response without running the handler: a problem (400, 409, 413, 422, 503) or
   * the replay of the recorded response (marked {@code Idempotent-Replayed: true}).
   */
  record Respond(StoredResponse response, boolean replayed) implements Decision {
    public Respond {
      Objects.requireNonNull(response, "response");
    }
  }

  /** Run the handler, then finish the exchange exactly once with its response. */
  record Proceed(Exchange exchange) implements Decision {
    public Proceed {
      Objects.requireNonNull(exchange, "exchange");
    }
  }
}
