package dev.once.apps.mvc;

import dev.once.spring.Idempotent;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/** A Spring MVC application with the dependencies and the handler docs/spring-boot.md shows. */
@SpringBootApplication
public class MvcApp {

  public static void main(String[] args) {
    SpringApplication.run(MvcApp.class, args);
  }

  /** What a client asks to pay. */
  public record PaymentRequest(long amount) {}

  /** What a payment answers. */
  public record Payment(long amount, int run) {}

  /** Books a payment: counts how often it really ran. */
  @RestController
  public static class Payments {
    private final AtomicInteger runs = new AtomicInteger();

    @PostMapping("/api/payments")
    @Idempotent(keyRequired = true)
    public ResponseEntity<Payment> create(@RequestBody PaymentRequest request) {
      return ResponseEntity.status(HttpStatus.CREATED)
          .body(new Payment(request.amount(), runs.incrementAndGet()));
    }

    public int runs() {
      return runs.get();
    }
  }
}
