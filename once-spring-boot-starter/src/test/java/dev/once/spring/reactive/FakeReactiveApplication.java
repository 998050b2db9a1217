package dev.once.spring.reactive;

import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.web.embedded.netty.NettyReactiveWebServerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;
import reactor.core.publisher.Mono;

/**
 * A reactive Spring Boot application with one annotated WebFlux controller; nothing in it knows
 * about idempotency: the starter guards it from properties alone.
 */
@SpringBootApplication
public class FakeReactiveApplication {

  /**
   * Reactor Netty, the server a WebFlux application has by default; the starter's tests also have
   * Tomcat on the class path, which Spring Boot would prefer.
   */
  @Bean
  NettyReactiveWebServerFactory nettyReactiveWebServerFactory() {
    return new NettyReactiveWebServerFactory();
  }

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
}
