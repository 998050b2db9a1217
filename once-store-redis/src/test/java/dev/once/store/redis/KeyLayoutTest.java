package dev.once.store.redis;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.RecordId;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A record's names, against the layout {@link KeyLayout} documents, spelled out here on its own:
 * {@code <prefix>{<scope>|<key>}} for the key and {@code <prefix>changed:{<scope>|<key>}} for the
 * channel, with {@code %}, braces and {@code |} percent-encoded inside the tag.
 */
class KeyLayoutTest {

  private static final String PREFIX = "once:t:";
  private static final KeyLayout LAYOUT = new KeyLayout(PREFIX);

  /** Records whose names need escaping, where a tag cut or copied wrong would show. */
  private static final List<RecordId> RECORDS =
      List.of(
          RecordId.of(Scope.of("tenant", "POST /payments"), IdempotencyKey.of("k-1")),
          RecordId.of(Scope.of("a|b", "ü{x}"), IdempotencyKey.of("%7C|{}}%")),
          RecordId.of(Scope.of("t"), IdempotencyKey.of("}")),
          RecordId.of(Scope.of("t"), IdempotencyKey.of("x".repeat(IdempotencyKey.MAX_LENGTH))));

  @Test
  void aRecordsKeyAndChannelAreTheDocumentedLayout() {
    for (RecordId id : RECORDS) {
      String tag = "{" + escaped(id.scope().value()) + "|" + escaped(id.key().value()) + "}";
      byte[] key = LAYOUT.recordKey(id);
      assertThat(key).as("key of %s", id).isEqualTo(utf8(PREFIX + tag));
      assertThat(LAYOUT.channel(id))
          .as("channel of %s", id)
          .isEqualTo(utf8(PREFIX + "changed:" + tag));
      assertThat(LAYOUT.channelOfKey(key))
          .as("channel of %s's key", id)
          .isEqualTo(LAYOUT.channel(id));
      assertThat(LAYOUT.idOf(key)).isEqualTo(id);
    }
  }

  @Test
  void recordsThatDifferGetChannelsThatDiffer() {
    assertThat(
            RECORDS.stream()
                .map(id -> new String(LAYOUT.channel(id), StandardCharsets.UTF_8))
                .distinct())
        .hasSize(RECORDS.size());
  }

  private static String escaped(String part) {
    StringBuilder out = new StringBuilder();
    for (char c : part.toCharArray()) {
      switch (c) {
        case '%' -> out.append("%25");
        case '{' -> out.append("%7B");
        case '}' -> out.append("%7D");
        case '|' -> out.append("%7C");
        default -> out.append(c);
      }
    }
    return out.toString();
  }

  private static byte[] utf8(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }
}
