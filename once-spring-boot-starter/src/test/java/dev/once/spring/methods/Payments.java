package dev.once.spring.methods;

import dev.once.FinalFailure;
import dev.once.spring.Idempotent;
import dev.once.spring.InFlightMode;
import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.springframework.stereotype.Service;
import reactor.core.publisher.Mono;

/** Every shape of {@code @Idempotent} method, counting the effects that really happened. */
@Service
public class Payments {

  public record Order(String id, long amount, String currency) {}

  public record Receipt(String orderId, int charge) {}

  /** A business refusal: final, recorded and thrown again to retries. */
  public static class Declined extends RuntimeException {
    public Declined(String message) {
      super(message);
    }
  }

  // Read through methods: a test holds the proxy, whose own fields are never set.
  private final AtomicInteger charges = new AtomicInteger();
  private final Set<String> refunded = ConcurrentHashMap.newKeySet();
  private final AtomicInteger attempts = new AtomicInteger();

  public int charges() {
    return charges.get();
  }

  public boolean refunded(String orderId) {
    return refunded.contains(orderId);
  }

  public int attempts() {
    return attempts.get();
  }

  public void resetAttempts() {
    attempts.set(0);
  }

  @Idempotent(
      key = "#order.id",
      fingerprint = {"#order.amount", "#order.currency"})
  public Receipt charge(Order order) {
    return new Receipt(order.id(), charges.incrementAndGet());
  }

  @Idempotent(key = "#p0", scope = "'refunds'")
  public void refund(String orderId) {
    charges.incrementAndGet();
    refunded.add(orderId);
  }

  /** The key from a bean: {@code @keys}. */
  @Idempotent(key = "@keys.of(#a0)")
  public List<Receipt> chargeAll(String batchId, List<Order> orders) {
    return orders.stream().map(o -> new Receipt(o.id(), charges.incrementAndGet())).toList();
  }

  @Idempotent(key = "#orderId", fingerprint = "#orderId")
  public CompletableFuture<Receipt> chargeLater(String orderId, CompletableFuture<Void> gate) {
    charges.incrementAndGet();
    return gate.thenApply(v -> new Receipt(orderId, charges.get()));
  }

  @Idempotent(key = "#orderId")
  public Mono<Receipt> chargeReactive(String orderId) {
    return Mono.fromSupplier(() -> new Receipt(orderId, charges.incrementAndGet()));
  }

  /** Tells its caller whether the charge ran in this call: the record holds the receipt alone. */
  @Idempotent(key = "#orderId", scope = "'told'")
  public Idempotent.Result<Receipt> chargeOrReplay(String orderId) {
    return Idempotent.Result.of(new Receipt(orderId, charges.incrementAndGet()));
  }

  /** The same key space as {@link #chargeOrReplay}, without telling. */
  @Idempotent(key = "#orderId", scope = "'told'")
  public Receipt chargeValueOnly(String orderId) {
    return new Receipt(orderId, charges.incrementAndGet());
  }

  @Idempotent(key = "#orderId")
  public CompletableFuture<Idempotent.Result<Receipt>> chargeLaterOrReplay(String orderId) {
    return CompletableFuture.supplyAsync(
        () -> Idempotent.Result.of(new Receipt(orderId, charges.incrementAndGet())));
  }

  @Idempotent(key = "#orderId")
  public Mono<Idempotent.Result<Receipt>> chargeReactiveOrReplay(String orderId) {
    return Mono.fromSupplier(
        () -> Idempotent.Result.of(new Receipt(orderId, charges.incrementAndGet())));
  }

  /** Claims to be a replay: the proxy knows better. */
  @Idempotent(key = "#orderId")
  public Idempotent.Result<Receipt> chargeClaimingReplay(String orderId) {
    return new Idempotent.Result<>(new Receipt(orderId, charges.incrementAndGet()), true);
  }

  @Idempotent(key = "#orderId")
  public Mono<Receipt> nothingReactive(String orderId) {
    return Mono.fromRunnable(charges::incrementAndGet);
  }

  @Idempotent(key = "#orderId", noRetryFor = Declined.class)
  public Receipt declined(String orderId) {
    charges.incrementAndGet();
    throw new Declined("card declined for this order");
  }

  @Idempotent(key = "#orderId")
  public Receipt insufficientFunds(String orderId) {
    charges.incrementAndGet();
    throw new FinalFailure("insufficient-funds", "balance too low");
  }

  /** Fails transiently (a checked exception) the first time, then succeeds. */
  @Idempotent(key = "#orderId")
  public Receipt flaky(String orderId) throws IOException {
    if (attempts.incrementAndGet() == 1) {
      throw new IOException("bank unreachable");
    }
    return new Receipt(orderId, charges.incrementAndGet());
  }

  @Idempotent(key = "#orderId", noRetryFor = Declined.class)
  public CompletableFuture<Receipt> declinedLater(String orderId) {
    charges.incrementAndGet();
    return CompletableFuture.failedFuture(new Declined("declined later"));
  }

  /** Holds the key until released, for races; the latches are not fingerprinted. */
  @Idempotent(key = "#orderId", fingerprint = "#orderId")
  public Receipt slow(String orderId, CountDownLatch entered, CountDownLatch release)
      throws InterruptedException {
    entered.countDown();
    if (!release.await(20, TimeUnit.SECONDS)) {
      throw new IllegalStateException("never released");
    }
    return new Receipt(orderId, charges.incrementAndGet());
  }

  @Idempotent(
      key = "#orderId",
      fingerprint = "#orderId",
      inFlight = InFlightMode.WAIT,
      maxWait = "20s")
  public Receipt slowWaiting(String orderId, CountDownLatch entered, CountDownLatch release)
      throws InterruptedException {
    return slow(orderId, entered, release);
  }

  @Idempotent(key = "#order.customer")
  public Receipt badExpression(Order order) {
    return new Receipt(order.id(), charges.incrementAndGet());
  }
}
