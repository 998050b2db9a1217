package dev.once.examples.quickstart;

import dev.once.ExecutionResult;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Once;
import dev.once.ResultCodec;
import dev.once.Scope;
import dev.once.fingerprint.Fingerprinter;
import dev.once.store.InMemoryStore;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Sends the same payment twice, the way a client retries after a lost response, and shows that the
 * charge runs once and the retry gets the first result back. Then reuses the key for a different
 * payment and shows the mismatch.
 */
public final class QuickStart {

  private QuickStart() {}

  public static void main(String[] args) {
    AtomicInteger charges = new AtomicInteger();
    Scope merchant = Scope.of(Scope.hash("sk_test_merchant_42"), "POST /payments");
    IdempotencyKey key = IdempotencyKey.parseHeader("\"" + UUID.randomUUID() + "\"");
    Fingerprinter fingerprinter = Fingerprinter.builder().exclude("/client_sent_at").build();

    try (Once once = Once.of(InMemoryStore.create())) {
      String body = "{\"amount\": 1000, \"currency\": \"EUR\", \"client_sent_at\": \"12:00:00\"}";
      String retried =
          "{ \"currency\":\"EUR\",\"amount\":1000.0, \"client_sent_at\": \"12:00:05\" }";
      String other = "{\"amount\": 5000, \"currency\": \"EUR\"}";

      System.out.println("Idempotency-Key: " + key);
      show(
          "1st request",
          once.execute(
              merchant,
              key,
              fp(fingerprinter, body),
              ResultCodec.utf8(),
              ctx -> "{\"payment_id\":\"pay_" + charges.incrementAndGet() + "\",\"amount\":1000}"));
      show(
          "retry (same payment, reordered, re-timestamped)",
          once.execute(
              merchant,
              key,
              fp(fingerprinter, retried),
              ResultCodec.utf8(),
              ctx -> "{\"payment_id\":\"pay_" + charges.incrementAndGet() + "\",\"amount\":1000}"));
      show(
          "same key, different payment",
          once.execute(
              merchant,
              key,
              fp(fingerprinter, other),
              ResultCodec.utf8(),
              ctx -> "{\"payment_id\":\"pay_" + charges.incrementAndGet() + "\",\"amount\":5000}"));
      System.out.println("charges made: " + charges.get());
    }
  }

  private static Fingerprint fp(Fingerprinter fingerprinter, String body) {
    return fingerprinter.json(body.getBytes(StandardCharsets.UTF_8), "POST", "/payments");
  }

  private static void show(String label, ExecutionResult<String> result) {
    String shown =
        result.accept(
            new ExecutionResult.Visitor<String, String>() {
              @Override
              public String executed(ExecutionResult.Executed<String> executed) {
                return "EXECUTED  -> " + executed.value();
              }

              @Override
              public String replayed(ExecutionResult.Replayed<String> replayed) {
                return "REPLAYED  -> " + replayed.value();
              }

              @Override
              public String failed(ExecutionResult.Failed<String> failed) {
                return "FAILED    -> " + failed.failure().code();
              }

              @Override
              public String inFlight(ExecutionResult.InFlight<String> inFlight) {
                return "IN FLIGHT -> retry after " + inFlight.retryAfter() + " (HTTP 409)";
              }

              @Override
              public String fingerprintMismatch(
                  ExecutionResult.FingerprintMismatch<String> mismatch) {
                return "REFUSED   -> the key was used for a different request (HTTP 422)";
              }

              @Override
              public String responseUnavailable(
                  ExecutionResult.ResponseUnavailable<String> unavailable) {
                return "DONE      -> but its result was not stored (HTTP 409)";
              }

              @Override
              public String storeUnavailable(ExecutionResult.StoreUnavailable<String> unavailable) {
                return "REFUSED   -> the store is down; retry after "
                    + unavailable.retryAfter()
                    + " (HTTP 503)";
              }
            });
    System.out.printf("%-50s %s%n", label + ":", shown);
  }
}
