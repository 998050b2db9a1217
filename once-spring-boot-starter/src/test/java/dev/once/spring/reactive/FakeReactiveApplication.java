package dev.once.spring.reactive;

import dev.once.spring.BootLine;
import dev.once.spring.Idempotent;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.context.annotation.Import;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A reactive Spring Boot application with two WebFlux controllers: one that knows nothing about
 * idempotency (the starter guards it from properties alone), and one {@code @Idempotent} handler.
 */
@SpringBootApplication
@Import(
    BootLine.NettyServer.class) // Reactor Netty, the server a WebFlux application has by default
public class FakeReactiveApplication {

  /** Creates a payment per call, numbered, so a replay is told apart from a second run. */
  @RestController
  public static class PaymentsController {

    private final AtomicInteger created = new AtomicInteger();

    /** How often a payment was really created. */
    public int created() {
      return created.get();
    }

    @PostMapping("/api/payments")
    Mono<ResponseEntity<String>> create(@RequestBody Mono<String> body) {
      return body.map(
          json -> {
            int id = created.incrementAndGet();
            return ResponseEntity.status(HttpStatus.CREATED)
                .header("Location", "/api/payments/pay_" + id)
                .body("{\"id\":\"pay_" + id + "\",\"received_bytes\":" + json.length() + "}");
          });
    }
  }

  /** A handler whose route comes from its annotation alone: no {@code once.routes} names it. */
  @RestController
  public static class RefundsController {

    private final AtomicInteger refunded = new AtomicInteger();

    /** How often a refund really ran. */
    public int refunded() {
      return refunded.get();
    }

    @PostMapping("/refunds/{payment}")
    @Idempotent(keyRequired = true)
    Mono<String> refund(@PathVariable String payment) {
      return Mono.fromSupplier(() -> payment + ":" + refunded.incrementAndGet());
    }
  }
}
