package dev.once.http;

import dev.once.Outcome;
import dev.once.OutcomeClassifier;

/**
 * The default classification of responses, the one place the rule lives (DESIGN §4): 2xx and 3xx
 * are completed; 5xx and the client errors that ask for the very same request again later are
 * transient (never cached, the key is released): 408 Request Timeout, 423 Locked (the resource is
 * locked for now), 425 Too Early (replay it after the TLS handshake) and 429 Too Many Requests.
 * Every other 4xx is a final failure (replayed).
 */
public final class HttpOutcomes implements OutcomeClassifier<StoredResponse> {

  /** The default classifier. */
  public static final HttpOutcomes DEFAULT = new HttpOutcomes();

  private HttpOutcomes() {}

  /** The outcome a status code stands for. */
  public static Outcome of(int status) {
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

  @Override
  public Outcome classify(StoredResponse response) {
    return of(response.status());
  }
}
