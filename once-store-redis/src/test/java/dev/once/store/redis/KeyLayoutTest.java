package dev.once.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.RecordId;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A record's names: the channel a batch derives from a key in hand is the record's own. */
class KeyLayoutTest {

  private static final KeyLayout LAYOUT = new KeyLayout("once:t:");

  /** Records whose names need escaping, where a copy that cut the tag wrong would show. */
  private static final List<RecordId> RECORDS =
      List.of(
          RecordId.of(Scope.of("tenant", "POST /payments"), IdempotencyKey.of("k-1")),
          RecordId.of(Scope.of("a|b", "ü{x}"), IdempotencyKey.of("%7C|{}}%")),
          RecordId.of(Scope.of("t"), IdempotencyKey.of("}")),
          RecordId.of(Scope.of("t"), IdempotencyKey.of("x".repeat(IdempotencyKey.MAX_LENGTH))));

  @Test
  void theChannelOfARecordsKeyIsTheRecordsChannel() {
    for (RecordId id : RECORDS) {
      byte[] channel = LAYOUT.channelOfKey(LAYOUT.recordKey(id));
      assertThat(new String(channel, StandardCharsets.UTF_8))
          .as("%s", id)
          .isEqualTo(new String(LAYOUT.channel(id), StandardCharsets.UTF_8));
      assertThat(LAYOUT.idOf(LAYOUT.recordKey(id))).isEqualTo(id);
    }
  }

  @Test
  void recordsThatDifferGetChannelsThatDiffer() {
    assertThat(
            RECORDS.stream()
                .map(
                    id ->
                        new String(
                            LAYOUT.channelOfKey(LAYOUT.recordKey(id)), StandardCharsets.UTF_8))
                .distinct())
        .hasSize(RECORDS.size());
  }
}
