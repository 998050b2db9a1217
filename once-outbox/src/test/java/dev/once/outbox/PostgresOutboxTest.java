package dev.once.outbox;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.tck.ChildJvm;
import java.sql.Connection;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

class PostgresOutboxTest extends OutboxBehaviour {

  @BeforeAll
  static void openDatabase() throws Exception {
    open(TestDatabase.POSTGRESQL, "once_outbox_pg");
  }

  @Override
  TestDatabase database() {
    return TestDatabase.POSTGRESQL;
  }

  @Test
  void fourRelaysSendEachOfTwelveHundredMessagesExactlyOnce() throws Exception {
    int n = 1_200;
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      outbox.enqueueAll(c, applies("many-", n));
      c.commit();
    }
    // Every send is counted on arrival, before any deduplication: no-fault relays must not resend.
    Map<String, AtomicInteger> sends = new ConcurrentHashMap<>();
    Delivery counting =
        pending -> {
          sends.computeIfAbsent(pending.message().id(), k -> new AtomicInteger()).incrementAndGet();
          return http.deliver(pending);
        };
    List<OutboxRelay> relays = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      relays.add(relay(counting).batchSize(25).threadName("relay-" + i).build());
    }
    relays.forEach(OutboxRelay::start);
    try {
      long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      while (count("state = 'DELIVERED'") < n && System.nanoTime() < deadline) {
        Thread.sleep(50);
      }
    } finally {
      relays.forEach(OutboxRelay::close);
    }
    assertThat(count("state = 'DELIVERED' AND attempts = 1")).isEqualTo(n);
    assertThat(sends).hasSize(n);
    assertThat(sends.values()).allSatisfy(s -> assertThat(s.get()).isEqualTo(1));
    for (int i = 0; i < n; i++) {
      assertThat(downstream.effects(outbox.idempotencyKey("many-" + i))).isEqualTo(1);
    }
  }

  @Test
  void aRelayKilledMidBatchLeavesEveryMessageAppliedExactlyOnce() throws Exception {
    int n = 300;
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      outbox.enqueueAll(c, applies("kill-", n));
      c.commit();
    }
    // The child's 40th effect holds its request open: the child has applied effects downstream
    // that it has not recorded, when it is SIGKILLed.
    downstream.holdAt(40);
    int leaseSeconds = 6;
    try (ChildJvm child =
        ChildJvm.start(
            RelayMain.class,
            TestDatabase.POSTGRESQL.url,
            table,
            "orders",
            downstream.base().toString(),
            String.valueOf(leaseSeconds))) {
      child.awaitLine("relay started", 60);
      assertThat(downstream.awaitHeld(60)).as("the child relay reached the 40th effect").isTrue();
      child.kill();
    }
    long claimedByTheDead = count("state = 'PENDING' AND attempts = 1");
    assertThat(claimedByTheDead).as("rows the dead relay claimed and never recorded").isPositive();
    downstream.release();

    List<OutboxRelay> survivors =
        List.of(relay(http).batchSize(50).build(), relay(http).batchSize(50).build());
    survivors.forEach(OutboxRelay::start);
    try {
      long deadline = System.nanoTime() + Duration.ofSeconds(120).toNanos();
      while (count("state = 'DELIVERED'") < n && System.nanoTime() < deadline) {
        Thread.sleep(100);
      }
    } finally {
      survivors.forEach(OutboxRelay::close);
    }
    assertThat(count("state = 'DELIVERED'"))
        .as("every message delivered at least once")
        .isEqualTo(n);
    int resent = 0;
    for (int i = 0; i < n; i++) {
      String key = outbox.idempotencyKey("kill-" + i);
      assertThat(downstream.effects(key)).as("effects of kill-" + i).isEqualTo(1);
      resent += downstream.arrivals(key) > 1 ? 1 : 0;
    }
    assertThat(resent)
        .as("messages the dead relay had sent and a survivor sent again")
        .isPositive();
  }

  @Test
  void aRelayThatLostItsClaimCannotOverwriteTheNewOwnersOutcome() throws Exception {
    commit(apply("stolen"));
    RecordingListener listener = new RecordingListener();
    CompletableFuture<DeliveryOutcome> slow = new CompletableFuture<>();
    OutboxRelay first =
        outbox
            .relay(pending -> slow)
            .deliveryTimeout(Duration.ofSeconds(30))
            .lease(Duration.ofSeconds(31))
            .listener(
                new RelayListener() {
                  @Override
                  public void onLeaseLost(PendingMessage message) {
                    listener.dead.add("lost " + message.attempt());
                  }
                })
            .build();
    CompletableFuture<Integer> firstRun = CompletableFuture.supplyAsync(first::runOnce);
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (count("attempts = 1") == 0 && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    // The lease ends early (as if the first relay had stalled for a minute); a second relay takes
    // over.
    TestDatabase.execute(
        pool, "UPDATE " + table + " SET available_at = clock_timestamp() - interval '1 second'");
    relay(pending -> CompletableFuture.completedFuture(DeliveryOutcome.retry("down")))
        .build()
        .runOnce();
    slow.complete(DeliveryOutcome.retry("late"));
    firstRun.get();
    assertThat(listener.dead).containsExactly("lost 1");
    assertThat(count("attempts = 2 AND last_error = 'down'")).isEqualTo(1);
  }
}
