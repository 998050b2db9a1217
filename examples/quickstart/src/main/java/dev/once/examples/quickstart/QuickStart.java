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
      String retried = "{ \"currency\":\"EUR\",\"amount\":1000.0, \"client_sent_at\": \"12:00:05\" }";
      String other = "{\"amount\": 5000, \"currency\": \"EUR\"}";

      System.out.println("Idempotency-Key: " + key);
      show("1st request", once.execute(merchant, key, fp(fingerprinter, body), ResultCodec.utf8(),
          ctx -> "{\"payment_id\":\"pay_" + charges.incrementAndGet() + "\",\"amount\":1000}"));
      show("retry (same payment, reordered, re-timestamped)", once.execute(merchant, key, fp(fingerprinter, retried),
          ResultCodec.utf8(), ctx -> "{\"payment_id\":\"pay_" + charges.incrementAndGet() + "\",\"amount\":1000}"));
      show("same key, different payment", once.execute(merchant, key, fp(fingerprinter, other),
          ResultCodec.utf8(), ctx -> "{\"payment_id\":\"pay_" + charges.incrementAndGet() + "\",\"amount\":5000}"));
      System.out.println("charges made: " + charges.get());
    }
  }

  private static Fingerprint fp(Fingerprinter fingerprinter, String body) {
    return fingerprinter.json(body.getBytes(StandardCharsets.UTF_8), "POST", "/payments");
  }

  private static void show(String label, ExecutionResult<String> result) {
    String shown;
    if (result instanceof ExecutionResult.Executed<String> e) {
      shown = "EXECUTED  -> " + e.value();
    } else if (result instanceof ExecutionResult.Replayed<String> r) {
      shown = "REPLAYED  -> " + r.value();
    } else if (result instanceof ExecutionResult.FingerprintMismatch) {
      shown = "REFUSED   -> the key was used for a different request (HTTP 422)";
    } else {
      shown = result.toString();
    }
    System.out.printf("%-50s %s%n", label + ":", shown);
  }
}
