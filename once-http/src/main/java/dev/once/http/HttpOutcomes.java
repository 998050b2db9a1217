package dev.once.http;

import dev.once.Outcome;
import dev.once.OutcomeClassifier;
import java.util.Locale;

/**
 * Which responses are recorded and replayed, as presets (the route option {@code replay}); the one
 * place each rule lives. A response that is not recorded is transient: the key is released and a
 * retry runs afresh. Informational (1xx) statuses are never final answers, so no preset records
 * them. A route needing another rule sets its own {@link OutcomeClassifier} with {@link
 * RoutePolicy.Builder#classifier}.
 */
public enum HttpOutcomes implements OutcomeClassifier<StoredResponse> {

  /**
   * DESIGN §4: 2xx and 3xx are completed; 5xx and the client errors that ask for the very same
   * request again later are transient (never cached, the key is released): 408 Request Timeout, 423
   * Locked (the resource is locked for now), 425 Too Early (replay it after the TLS handshake) and
   * 429 Too Many Requests. Every other 4xx is a final failure (replayed).
   */
  DEFAULT {
    @Override
    Outcome outcomeOf(int status) {
      if (status >= 200 && status < 400) {
        return Outcome.COMPLETED;
      }
      if (status >= 500
          || status < 200
          || status == 408
          || status == 423
          || status == 425
          || status == 429) {
        return Outcome.TRANSIENT;
      }
      return Outcome.FAILED_FINAL;
    }
  },

  /**
   * As Stripe does: whatever status the handler answered is the key's answer, 5xx included, so a
   * retry never runs the operation again once it produced a response. The client must use a new key
   * to try again after an error. A handler that threw without answering is still released.
   */
  STRIPE {
    @Override
    Outcome outcomeOf(int status) {
      if (status < 200) {
        return Outcome.TRANSIENT;
      }
      return status < 400 ? Outcome.COMPLETED : Outcome.FAILED_FINAL;
    }
  },

  /**
   * Only 2xx answers are recorded; any other status releases the key, so a client may retry a
   * rejected request with the same key after fixing what was wrong (the key then runs afresh).
   */
  SUCCESS_ONLY {
    @Override
    Outcome outcomeOf(int status) {
      return status >= 200 && status < 300 ? Outcome.COMPLETED : Outcome.TRANSIENT;
    }
  };

  /** The outcome a status code stands for under the default rule. */
  public static Outcome of(int status) {
    return DEFAULT.outcomeOf(status);
  }

  abstract Outcome outcomeOf(int status);

  @Override
  public Outcome classify(StoredResponse response) {
    return outcomeOf(response.status());
  }

  /**
   * The preset's name as options spell it: {@code default}, {@code stripe}, {@code success-only}.
   */
  public String optionName() {
    return name().toLowerCase(Locale.ROOT).replace('_', '-');
  }
}
