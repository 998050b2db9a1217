package dev.once.spring.shop;

import dev.once.spring.Idempotent;
import dev.once.spring.InFlightMode;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.context.request.async.DeferredResult;
import org.springframework.web.server.ResponseStatusException;

/**
 * Counts how often each handler really ran, so tests assert executions rather than the filter's
 * word.
 */
@RestController
public class OrdersController {

  public final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final AtomicInteger ids = new AtomicInteger();

  private int ran(String handler) {
    runs.computeIfAbsent(handler, h -> new AtomicInteger()).incrementAndGet();
    return ids.incrementAndGet();
  }

  public int runs(String handler) {
    AtomicInteger n = runs.get(handler);
    return n == null ? 0 : n.get();
  }

  @PostMapping("/api/orders")
  @Idempotent(keyRequired = true)
  ResponseEntity<Map<String, Object>> create(@RequestBody Map<String, Object> order) {
    int id = ran("create");
    return ResponseEntity.status(HttpStatus.CREATED)
        .header("Location", "/api/orders/ord_" + id)
        .body(Map.of("order_id", "ord_" + id, "amount", order.get("amount")));
  }

  @GetMapping("/api/orders/{id}")
  @Idempotent
  Map<String, Object> show(@PathVariable String id) {
    ran("show");
    return Map.of("order_id", id);
  }

  @PostMapping("/api/orders/{id}/refunds")
  @Idempotent(inFlight = InFlightMode.WAIT, maxWait = "${shop.refund-wait:5s}")
  ResponseEntity<Map<String, Object>> refund(
      @PathVariable String id, @RequestParam(defaultValue = "0") long ms)
      throws InterruptedException {
    int n = ran("refund");
    TimeUnit.MILLISECONDS.sleep(ms);
    return ResponseEntity.status(HttpStatus.CREATED)
        .body(Map.of("refund_id", "re_" + n, "order_id", id));
  }

  @PostMapping("/api/notes")
  ResponseEntity<Map<String, Object>> note(@RequestBody String text) {
    int n = ran("note");
    return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("note_id", "note_" + n));
  }

  @PostMapping("/api/strict-notes")
  ResponseEntity<Map<String, Object>> strictNote(@RequestBody String text) {
    int n = ran("strict-note");
    return ResponseEntity.status(HttpStatus.CREATED).body(Map.of("note_id", "note_" + n));
  }

  @PostMapping("/api/missing")
  @Idempotent
  Map<String, Object> missing() {
    ran("missing");
    throw new ResponseStatusException(HttpStatus.NOT_FOUND, "no such order");
  }

  @PostMapping("/api/boom")
  @Idempotent
  Map<String, Object> boom() {
    ran("boom");
    throw new IllegalStateException("the handler failed");
  }

  @PostMapping("/api/deferred")
  @Idempotent
  DeferredResult<ResponseEntity<Map<String, Object>>> deferred() {
    int n = ran("deferred");
    DeferredResult<ResponseEntity<Map<String, Object>>> result = new DeferredResult<>(5_000L);
    CompletableFuture.delayedExecutor(100, TimeUnit.MILLISECONDS)
        .execute(
            () ->
                result.setResult(
                    ResponseEntity.status(HttpStatus.ACCEPTED).body(Map.of("job_id", "job_" + n))));
    return result;
  }
}
