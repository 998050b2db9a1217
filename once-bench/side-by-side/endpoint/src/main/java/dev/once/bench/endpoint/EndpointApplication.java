package dev.once.bench.endpoint;

import dev.once.spring.Idempotent;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import java.net.URI;
import java.util.concurrent.ThreadLocalRandom;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Profile;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code POST /payments}, guarded by the starter: the endpoint every library in the side-by-side
 * comparison runs. It does no work of its own (no database write, no remote call), so what is
 * measured is the idempotency layer and the framework under it. It does not bind the request body:
 * each library reads the body to fingerprint it, and idempotency4j leaves nothing for a
 * {@code @RequestBody} after it has (the handler would answer 400), so no side's handler reads it.
 * Its id is not a {@code UUID.randomUUID()}: that takes a lock shared by every thread (the
 * platform's SecureRandom), which at this rate would be the bottleneck. The other library's
 * endpoint is the same handler with that library's annotation; the driver ({@code ../run.sh}) knows
 * nothing of either.
 */
@SpringBootApplication
@RestController
public class EndpointApplication {

  /** The response body: what a replay must return unchanged. */
  record Payment(String id, long amount, String currency, String status) {}

  /**
   * The in-memory store (unless the postgres profile is active), room for ten million records: a
   * run of new keys adds about two million, and at the default million the store would fill and
   * answer 503 part-way through.
   */
  @Bean
  @Profile("!postgres")
  IdempotencyStore memoryStore() {
    return InMemoryStore.builder().maxRecords(10_000_000).build();
  }

  @PostMapping("/payments")
  @Idempotent(keyRequired = true)
  ResponseEntity<Payment> create() {
    Payment payment =
        new Payment(Long.toHexString(ThreadLocalRandom.current().nextLong()), 1000, "EUR", "paid");
    return ResponseEntity.created(URI.create("/payments/" + payment.id())).body(payment);
  }

  public static void main(String[] args) {
    SpringApplication.run(EndpointApplication.class, args);
  }
}
