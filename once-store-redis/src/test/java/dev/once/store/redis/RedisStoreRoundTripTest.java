package dev.once.store.redis;

import static dev.once.tck.Samples.newFingerprint;
import static dev.once.tck.Samples.newId;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Fingerprint;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult.Claimed;
import dev.once.store.LeaseToken;
import dev.once.store.RecordId;
import dev.once.tck.RequiredServices;
import io.lettuce.core.RedisClient;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * How many scripts an operation costs, counted by a Redis this test owns (so nothing else adds to
 * its {@code INFO commandstats}): a batched heartbeat must cost one round trip per few hundred
 * leases, not one per lease, or a slow Redis lets leases lapse.
 */
class RedisStoreRoundTripTest {

  private static final Duration LONG = Duration.ofMinutes(30);

  private static RedisServerProcess server;
  private static RedisClient client;
  private static RedisStore store;

  @BeforeAll
  static void startServer() {
    RequiredServices.assume(
        RedisServerProcess.binariesAvailable(), "redis-server and redis-cli on the PATH");
    server = RedisServerProcess.start("--appendonly", "no");
    client = RedisClient.create(server.uri());
    store = RedisStore.of(client);
  }

  @AfterAll
  static void stopServer() {
    if (store != null) {
      store.close();
    }
    if (client != null) {
      client.shutdown();
    }
    if (server != null) {
      server.close();
    }
  }

  @Test
  void aBatchedHeartbeatRunsOneScriptPerFiveHundredLeases() {
    Fingerprint fingerprint = newFingerprint();
    List<LeaseToken> held = new ArrayList<>();
    for (int i = 0; i < 1_200; i++) {
      RecordId id = newId();
      held.add(
          new LeaseToken(
              id, ((Claimed) store.claim(new ClaimRequest(id, fingerprint, LONG, LONG))).token()));
    }
    long before = server.scriptCalls();

    Set<LeaseToken> extended = store.heartbeat(held, LONG);

    assertThat(extended).hasSize(held.size());
    assertThat(server.scriptCalls() - before).as("scripts run for 1,200 leases").isEqualTo(3);
  }
}
