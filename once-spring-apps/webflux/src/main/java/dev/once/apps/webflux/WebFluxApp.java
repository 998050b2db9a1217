package dev.once.apps.webflux;

import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpStatus;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.ResponseStatus;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/** A WebFlux application with the dependencies and the configuration docs/webflux.md shows. */
@SpringBootApplication
public class WebFluxApp {

  public static void main(String[] args) {
    SpringApplication.run(WebFluxApp.class, args);
  }

  /** Books a payment: counts how often it really ran. */
  @RestController
  public static class Payments {
    private final AtomicInteger runs = new AtomicInteger();

    @PostMapping("/api/payments")
    @ResponseStatus(HttpStatus.CREATED)
    public Mono<Map<String, Object>> create(@RequestBody Map<String, Object> payment) {
      return Mono.fromSupplier(
          () -> Map.of("amount", payment.get("amount"), "run", runs.incrementAndGet()));
    }

    public int runs() {
      return runs.get();
    }
  }
}
