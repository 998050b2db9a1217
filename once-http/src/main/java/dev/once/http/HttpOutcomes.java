package dev.once.http;

import dev.once.Outcome;
import dev.once.OutcomeClassifier;

/**
 * The default classification of responses: 2xx and 3xx are completed; 5xx, 408 and 429 are
 * transient (never cached, the key is released); every other 4xx is a final failure (replayed).
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
    if (status >= 500 || status == 408 || status == 429 || status < 200) {
      return Outcome.TRANSIENT;
    }
    return Outcome.FAILED_FINAL;
  }

  @Override
  public Outcome classify(StoredResponse response) {
    return of(response.status());
  }
}
