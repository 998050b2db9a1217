package dev.once.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.tck.RequiredServices;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A hostile upstream and hostile clients, generated from a seed ({@link HostilePlan}), against the
 * gateway over loopback sockets, on the embedded store and on Redis; after each run the rules of
 * {@link HostileRun} must hold. The short runs use fixed seeds, so the build is repeatable; the
 * chaos profile draws new ones. A run that breaks a rule names its seed: {@code
 * -Donce.hostile.seed=N} runs that seed in every test here.
 */
class HostileTrafficTest {

  private static final String SEED = "once.hostile.seed";

  @Test
  @Timeout(120)
  void aShortHostileRunOnTheEmbeddedStoreKeepsEveryRule() throws Exception {
    run(seed(20261128L), 50, 20, 3_000);
  }

  @Test
  @Timeout(120)
  void aShortHostileRunOnRedisKeepsEveryRule() throws Exception {
    RequiredServices.requireReachable("Redis", "127.0.0.1", 6379);
    run(seed(20261129L), 50, 20, 3_000, redis());
  }

  @Test
  @Tag("chaos")
  @Timeout(900)
  void longHostileRunsOnBothStoresKeepEveryRule() throws Exception {
    // A replayed seed runs once.
    int rounds = System.getProperty(SEED) == null ? 4 : 1;
    for (int round = 0; round < rounds; round++) {
      run(seed(System.nanoTime()), 300, 100, 15_000);
      if (round % 2 == 0 && reachable()) {
        run(seed(System.nanoTime()), 300, 100, 15_000, redis());
      }
    }
  }

  private static void run(long seed, int keys, int unkeyed, long spreadMillis, String... store)
      throws Exception {
    HostilePlan plan =
        HostilePlan.generate(
            seed, keys, unkeyed, spreadMillis, HostileRun.UPSTREAM_TIMEOUT_MILLIS + 500);
    System.out.println("hostile run: seed " + seed + " (replay with -D" + SEED + "=" + seed + ")");
    List<String> broken = HostileRun.run(plan, store);
    assertThat(broken)
        .as("rules broken by seed %d (replay with -D%s=%d)", seed, SEED, seed)
        .isEmpty();
  }

  private static long seed(long otherwise) {
    return Long.getLong(SEED, otherwise);
  }

  private static String[] redis() {
    return new String[] {
      "--store",
      "redis://127.0.0.1:6379",
      "--store-table",
      "once_hostile_" + UUID.randomUUID().toString().replace("-", "")
    };
  }

  private static boolean reachable() {
    try (java.net.Socket s = new java.net.Socket("127.0.0.1", 6379)) {
      return true;
    } catch (java.io.IOException e) {
      return false;
    }
  }
}
