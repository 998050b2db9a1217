package dev.once.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.zaxxer.hikari.HikariDataSource;
import java.sql.Connection;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** What every database's outbox does, against a real server and a real downstream behind Once. */
abstract class OutboxBehaviour {

  static HikariDataSource pool;
  static String table;
  static Downstream downstream;
  static HttpDelivery http;

  Outbox outbox;

  abstract TestDatabase database();

  static void open(TestDatabase db, String prefix) throws Exception {
    pool = db.pool(12);
    table = TestDatabase.table(prefix);
    TestDatabase.execute(pool, "DROP TABLE IF EXISTS " + table);
    downstream = Downstream.start();
    http =
        HttpDelivery.builder()
            .baseUri(downstream.base())
            .requestTimeout(Duration.ofSeconds(10))
            .threads(4)
            .build();
  }

  @AfterAll
  static void closeAll() throws Exception {
    if (http != null) {
      http.close();
    }
    if (downstream != null) {
      downstream.close();
    }
    if (pool != null) {
      TestDatabase.execute(pool, "DROP TABLE IF EXISTS " + table);
      pool.close();
    }
  }

  @BeforeEach
  void emptyOutbox() {
    outbox = database().outbox(pool).tableName(table).name("orders").autoCreateSchema(true).build();
    TestDatabase.execute(pool, "DELETE FROM " + table);
  }

  OutboxRelay.Builder relay(Delivery delivery) {
    return outbox
        .relay(delivery)
        .pollInterval(Duration.ofMillis(20))
        .deliveryTimeout(Duration.ofSeconds(20))
        .lease(Duration.ofSeconds(30));
  }

  void commit(OutboxMessage... messages) throws SQLException {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      outbox.enqueueAll(c, List.of(messages));
      c.commit();
    }
  }

  static OutboxMessage apply(String id) {
    return OutboxMessage.builder(id, "apply")
        .header("Content-Type", "application/json")
        .payload("{\"id\":\"" + id + "\"}")
        .build();
  }

  long count(String where) {
    return TestDatabase.count(pool, "SELECT COUNT(*) FROM " + table + " WHERE " + where);
  }

  /** Runs the relay on this thread until nothing is due or pending work remains, within a bound. */
  static void drain(OutboxRelay relay, int rounds) {
    for (int i = 0; i < rounds && relay.runOnce() > 0; i++) {
      // bounded: a test that leaves work after this many rounds fails on its own assertions
    }
  }

  @Test
  void messagesOfARolledBackTransactionAreNeverSent() throws Exception {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      assertThat(outbox.enqueue(c, apply("rolled-back"))).isTrue();
      c.rollback();
    }
    commit(apply("committed"));
    drain(relay(http).build(), 10);
    assertThat(downstream.effects(outbox.idempotencyKey("committed"))).isEqualTo(1);
    assertThat(downstream.arrivals(outbox.idempotencyKey("rolled-back"))).isZero();
    assertThat(count("message_id = 'rolled-back'")).isZero();
    assertThat(count("message_id = 'committed' AND state = 'DELIVERED'")).isEqualTo(1);
  }

  @Test
  void theDownstreamGetsTheDerivedKeyHeadersAndPayload() throws Exception {
    List<String> keys = new CopyOnWriteArrayList<>();
    List<OutboxMessage> seen = new CopyOnWriteArrayList<>();
    Delivery recording =
        pending -> {
          keys.add(pending.idempotencyKey());
          seen.add(pending.message());
          return CompletableFuture.completedFuture(DeliveryOutcome.DELIVERED);
        };
    OutboxMessage m =
        OutboxMessage.builder("m-1", "topic-a")
            .key("customer-7")
            .header("X-Trace", "t 1")
            .payload(new byte[] {0, 1, (byte) 0xFF})
            .build();
    commit(m);
    drain(relay(recording).build(), 10);
    assertThat(seen).containsExactly(m);
    assertThat(keys).containsExactly(outbox.idempotencyKey("m-1"));
  }

  @Test
  void enqueueingTheSameIdTwiceAddsOneMessage() throws Exception {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(false);
      assertThat(outbox.enqueue(c, apply("twice"))).isTrue();
      assertThat(outbox.enqueue(c, apply("twice"))).isFalse();
      assertThat(outbox.enqueueAll(c, List.of(apply("twice"), apply("other")))).isEqualTo(1);
      c.commit();
    }
    assertThat(count("1 = 1")).isEqualTo(2);
  }

  @Test
  void enqueueOutsideATransactionIsRejectedAndWritesNothing() throws Exception {
    try (Connection c = pool.getConnection()) {
      c.setAutoCommit(true);
      assertThatThrownBy(() -> outbox.enqueue(c, apply("auto")))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("auto-commit");
    }
    assertThatThrownBy(() -> outbox.enqueue(null, apply("x")))
        .isInstanceOf(IllegalArgumentException.class);
    assertThat(count("1 = 1")).isZero();
  }

  @Test
  void transientFailuresBackOffThenTheMessageIsDead() throws Exception {
    RecordingListener listener = new RecordingListener();
    Backoff backoff = new Backoff(Duration.ofMillis(50), Duration.ofMillis(200), 2.0, 0.0);
    OutboxRelay relay = relay(http).maxAttempts(3).backoff(backoff).listener(listener).build();
    commit(OutboxMessage.of("flaky", "status/500", new byte[0]));
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (count("state = 'DEAD'") == 0 && System.nanoTime() < deadline) {
      relay.runOnce();
      Thread.sleep(20);
    }
    assertThat(
            count(
                "message_id = 'flaky' AND state = 'DEAD' AND attempts = 3 AND last_error LIKE '%HTTP 500%'"))
        .isEqualTo(1);
    assertThat(listener.retryDelays).containsExactly(Duration.ofMillis(50), Duration.ofMillis(100));
    assertThat(listener.dead).hasSize(1);
    assertThat(downstream.arrivals(outbox.idempotencyKey("flaky"))).isEqualTo(3);
  }

  @Test
  void retryAfterIsHonouredUpToTheLongestBackoff() throws Exception {
    RecordingListener listener = new RecordingListener();
    Backoff backoff = new Backoff(Duration.ofMillis(10), Duration.ofSeconds(5), 2.0, 0.0);
    commit(OutboxMessage.of("busy", "status/503", new byte[0]));
    relay(http).backoff(backoff).listener(listener).build().runOnce();
    assertThat(listener.retryDelays).containsExactly(Duration.ofSeconds(1));
    assertThat(count("state = 'PENDING' AND attempts = 1")).isEqualTo(1);
  }

  @Test
  void aClientErrorIsDeadAtOnce() throws Exception {
    commit(
        OutboxMessage.of("gone", "status/404", new byte[0]),
        OutboxMessage.of("bad", "status/422", new byte[0]));
    drain(relay(http).build(), 10);
    assertThat(count("state = 'DEAD' AND attempts = 1")).isEqualTo(2);
  }

  @Test
  void anInFlightConflictIsRetried() throws Exception {
    commit(OutboxMessage.of("conflict", "status/409", new byte[0]));
    relay(http).build().runOnce();
    assertThat(count("state = 'PENDING' AND attempts = 1 AND last_error = 'HTTP 409'"))
        .isEqualTo(1);
  }

  @Test
  void aSendWithoutAnAnswerKeepsItsLeaseAndTheLastAttemptEndsDead() throws Exception {
    CompletableFuture<DeliveryOutcome> never = new CompletableFuture<>();
    RecordingListener listener = new RecordingListener();
    OutboxRelay relay =
        outbox
            .relay(pending -> never)
            .deliveryTimeout(Duration.ofMillis(100))
            .lease(Duration.ofSeconds(1))
            .maxAttempts(1)
            .listener(listener)
            .build();
    commit(apply("silent"));
    assertThat(relay.runOnce()).isEqualTo(1);
    assertThat(count("state = 'PENDING' AND attempts = 1")).isEqualTo(1);
    assertThat(relay.runOnce()).as("hidden while its lease runs").isZero();
    long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
    while (count("state = 'DEAD'") == 0 && System.nanoTime() < deadline) {
      Thread.sleep(100);
      relay.runOnce();
    }
    assertThat(count("state = 'DEAD' AND last_error LIKE '%lease%'")).isEqualTo(1);
    assertThat(listener.dead).hasSize(1);
  }

  @Test
  void purgeDeletesOnlyDeliveredMessagesOlderThanTheRetention() throws Exception {
    commit(apply("p1"), apply("p2"), OutboxMessage.of("p-dead", "status/400", new byte[0]));
    drain(relay(http).build(), 10);
    commit(apply("p-pending"));
    assertThat(outbox.purgeDelivered(Duration.ofHours(1), 100)).isZero();
    Thread.sleep(20);
    assertThat(outbox.purgeDelivered(Duration.ofMillis(1), 1)).isEqualTo(1);
    assertThat(outbox.purgeDelivered(Duration.ofMillis(1), 100)).isEqualTo(1);
    assertThat(count("1 = 1")).isEqualTo(2);
    assertThat(count("state = 'DEAD'")).isEqualTo(1);
    assertThat(count("state = 'PENDING'")).isEqualTo(1);
  }

  @Test
  void aStartedRelayDeliversAndPurgesOnItsOwn() throws Exception {
    RecordingListener listener = new RecordingListener();
    try (OutboxRelay relay =
        relay(http)
            .retention(Duration.ZERO)
            .purgeInterval(Duration.ofMillis(50))
            .listener(listener)
            .workers(2)
            .build()) {
      relay.start();
      assertThatThrownBy(relay::start).isInstanceOf(IllegalStateException.class);
      commit(apply("auto-1"), apply("auto-2"));
      long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
      while (count("1 = 1") > 0 && System.nanoTime() < deadline) {
        Thread.sleep(20);
      }
    }
    assertThat(count("1 = 1")).isZero();
    assertThat(downstream.effects(outbox.idempotencyKey("auto-1"))).isEqualTo(1);
    assertThat(listener.purged).isEqualTo(2);
  }

  /** Counts what a relay reports. */
  static final class RecordingListener implements RelayListener {
    final List<Duration> retryDelays = new CopyOnWriteArrayList<>();
    final List<String> dead = new CopyOnWriteArrayList<>();
    final List<PendingMessage> delivered = new CopyOnWriteArrayList<>();
    volatile int purged;

    @Override
    public void onDelivered(PendingMessage message, Duration elapsed) {
      delivered.add(message);
    }

    @Override
    public void onRetry(PendingMessage message, String reason, Duration delay) {
      retryDelays.add(delay);
    }

    @Override
    public void onDead(PendingMessage message, String reason) {
      dead.add(reason);
    }

    @Override
    public synchronized void onPurged(int count) {
      purged += count;
    }
  }

  static List<OutboxMessage> applies(String prefix, int n) {
    List<OutboxMessage> all = new ArrayList<>(n);
    for (int i = 0; i < n; i++) {
      all.add(apply(prefix + i));
    }
    return all;
  }
}
