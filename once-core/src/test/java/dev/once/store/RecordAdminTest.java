package dev.once.store;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What consoles show of records and releases, written once for all of them. */
class RecordAdminTest {

  /** 2^53 + 1: the first integer a double, and so a JavaScript number, cannot hold. */
  private static final long BEYOND_DOUBLES = (1L << 53) + 1;

  private static final RecordId ID =
      RecordId.of(Scope.of("merchant-1", "orders"), IdempotencyKey.of("k-1"));

  @Test
  void aTokenBeyondWhatADoubleHoldsIsWrittenAsExactText() {
    Instant now = Instant.parse("2026-11-27T12:00:00Z");
    IdempotencyRecord record =
        new IdempotencyRecord(
            ID,
            RecordState.IN_PROGRESS,
            new Fingerprint(1, "aa".repeat(32)),
            BEYOND_DOUBLES,
            now.plusSeconds(30),
            now.plusSeconds(3600),
            new byte[] {1},
            null,
            now,
            now);

    Map<String, Object> described = RecordAdmin.describe(record);

    assertThat(described.get("token")).isEqualTo("9007199254740993");
    assertThat((double) BEYOND_DOUBLES)
        .as("what a JSON number would have become")
        .isEqualTo(9007199254740992.0);
    assertThat(described)
        .containsEntry("scope", "merchant-1/orders")
        .containsEntry("key", "k-1")
        .containsEntry("state", "IN_PROGRESS")
        .containsEntry("hasRecoveryPoint", true)
        .doesNotContainKeys("result", "recoveryPoint");
  }

  @Test
  void aReleaseIsItsResultNameAndTheTokenItReadAsText() {
    Map<String, Object> released = new LinkedHashMap<>();
    released.put("result", "released");
    released.put("token", "9007199254740993");
    Map<String, Object> absent = new LinkedHashMap<>();
    absent.put("result", "absent");
    absent.put("token", null);

    assertThat(
            RecordAdmin.describe(
                new RecordAdmin.Release(RecordAdmin.Result.RELEASED, BEYOND_DOUBLES)))
        .containsExactlyEntriesOf(released);
    assertThat(RecordAdmin.describe(new RecordAdmin.Release(RecordAdmin.Result.ABSENT, null)))
        .containsExactlyEntriesOf(absent);
    assertThat(new RecordAdmin.Release(RecordAdmin.Result.CHANGED_MEANWHILE, 1L).resultName())
        .isEqualTo("changed-meanwhile");
    assertThat(new RecordAdmin.Release(RecordAdmin.Result.NOT_IN_PROGRESS, 1L).resultName())
        .isEqualTo("not-in-progress");
  }

  @Test
  void aFinishedRecordShowsNoLease() {
    Instant now = Instant.parse("2026-11-27T12:00:00Z");
    for (RecordState finished :
        new RecordState[] {RecordState.COMPLETED, RecordState.FAILED_FINAL}) {
      IdempotencyRecord record =
          new IdempotencyRecord(
              ID,
              finished,
              new Fingerprint(1, "aa".repeat(32)),
              7,
              now.plusSeconds(25), // the lease it was finished under, not yet ended
              now.plusSeconds(3600),
              null,
              new byte[] {1},
              now,
              now);

      assertThat(record.leaseRemaining()).as(finished.name()).isZero();
      assertThat(RecordAdmin.describe(record))
          .as(finished.name())
          .containsEntry("leaseUntil", null)
          .containsEntry("leaseRemainingMillis", 0L);
    }
  }
}
