package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.tck.ChildJvm;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every completion the embedded store confirmed survives a SIGKILL: a child JVM claims and
 * completes in a loop, printing each key after {@code complete} returned; the test kills it
 * mid-loop, reopens the file and finds every printed key completed.
 */
class EmbeddedStoreCrashTest {

  @TempDir Path dir;

  @Test
  void everyConfirmedCompletionSurvivesSigkill() throws Exception {
    List<String> confirmed = new ArrayList<>();
    try (ChildJvm child = ChildJvm.start(Child.class, dir.toString())) {
      child.awaitLine("OPEN", 30);
      // Let it commit for a while; the kill lands wherever the loop happens to be.
      long end = System.nanoTime() + Duration.ofSeconds(2).toNanos();
      while (System.nanoTime() < end) {
        String line = child.nextLine(1);
        if (line != null && line.startsWith("DONE ")) {
          confirmed.add(line.substring(5));
        }
      }
      child.kill().stream()
          .filter(l -> l.startsWith("DONE "))
          .map(l -> l.substring(5))
          .forEach(confirmed::add);
    }
    assertThat(confirmed).hasSizeGreaterThan(10);
    try (EmbeddedStore store = EmbeddedStore.open(dir)) {
      for (String key : confirmed) {
        assertThat(store.get(id(key)))
            .as(key)
            .get()
            .extracting(r -> r.state())
            .isEqualTo(RecordState.COMPLETED);
      }
    }
  }

  static RecordId id(String key) {
    return RecordId.of(Scope.of("crash"), IdempotencyKey.of(key));
  }

  /** The child: claim and complete forever, confirming each completion on stdout. */
  public static final class Child {
    public static void main(String[] args) {
      Fingerprint fp = new Fingerprint(1, "00112233445566778899aabbccddeeff");
      try (EmbeddedStore store = EmbeddedStore.open(Path.of(args[0]))) {
        System.out.println("OPEN");
        for (long n = 0; ; n++) {
          RecordId id = id("k" + n);
          ClaimResult.Claimed c =
              (ClaimResult.Claimed)
                  store.claim(new ClaimRequest(id, fp, Duration.ofMinutes(1), Duration.ofHours(1)));
          if (!store.complete(id, c.token(), new byte[64], Duration.ofHours(1))) {
            throw new IllegalStateException("complete refused for " + id);
          }
          System.out.println("DONE k" + n);
        }
      }
    }
  }
}
