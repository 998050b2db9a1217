package dev.once.apps.methods;

import dev.once.spring.Idempotent;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.stereotype.Service;

/**
 * An application without a web server whose service method is {@code @Idempotent}, with the
 * dependencies docs/spring-boot.md shows.
 */
@SpringBootApplication
public class ChargesApp {

  public static void main(String[] args) {
    SpringApplication.run(ChargesApp.class, args);
  }

  /** What a client asks to charge; {@code requestId} is its idempotency key. */
  public record Charge(String requestId, long amount) {}

  /** What a charge answers. */
  public record Receipt(String requestId, long amount, int run) {}

  /** Charges a card: counts how often it really ran. */
  @Service
  public static class Charges {
    private final AtomicInteger runs = new AtomicInteger();

    @Idempotent(key = "#charge.requestId")
    public Receipt charge(Charge charge) {
      return new Receipt(charge.requestId(), charge.amount(), runs.incrementAndGet());
    }

    public int runs() {
      return runs.get();
    }
  }
}
