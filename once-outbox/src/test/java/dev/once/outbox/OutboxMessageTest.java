package dev.once.outbox;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OutboxMessageTest {

  @ParameterizedTest
  @ValueSource(strings = {"", "has space", "ünïcode", "tab\tinside"})
  void anIdOutsidePrintableAsciiIsRejected(String id) {
    assertThatThrownBy(() -> OutboxMessage.of(id, "d", new byte[0]))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("id must be");
  }

  @Test
  void anIdOfMoreThan255CharactersIsRejected() {
    assertThatThrownBy(() -> OutboxMessage.of("x".repeat(256), "d", new byte[0]))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void missingOrMalformedPartsAreRejected() {
    assertThatThrownBy(() -> OutboxMessage.of("a", null, new byte[0]))
        .hasMessageContaining("destination");
    assertThatThrownBy(() -> OutboxMessage.of("a", "line\nbreak", new byte[0]))
        .hasMessageContaining("control");
    assertThatThrownBy(() -> OutboxMessage.of("a", "d".repeat(1025), new byte[0]))
        .hasMessageContaining("destination");
    assertThatThrownBy(() -> OutboxMessage.of("a", "d", null)).hasMessageContaining("payload");
    assertThatThrownBy(() -> OutboxMessage.builder("a", "d").key("").build())
        .hasMessageContaining("key");
    assertThatThrownBy(() -> OutboxMessage.builder("a", "d").header("bad name", "v").build())
        .hasMessageContaining("header name");
    assertThatThrownBy(
            () -> OutboxMessage.builder("a", "d").header("X-A", "v\r\nInjected: 1").build())
        .hasMessageContaining("control");
    assertThatThrownBy(() -> OutboxMessage.builder("a", "d").header("idempotency-key", "k").build())
        .hasMessageContaining("derived");
  }

  @Test
  void thePayloadIsCopiedInAndOut() {
    byte[] payload = {1, 2, 3};
    OutboxMessage m = OutboxMessage.of("a", "d", payload);
    payload[0] = 9;
    m.payload()[1] = 9;
    assertThat(m.payload()).containsExactly(1, 2, 3);
    assertThat(m).isEqualTo(OutboxMessage.of("a", "d", new byte[] {1, 2, 3}));
  }

  @Test
  void toStringShowsNeitherPayloadNorHeaderValues() {
    OutboxMessage m =
        new OutboxMessage(
            "a", "d", null, Map.of("Authorization", "Bearer secret"), "card 4242".getBytes());
    assertThat(m.toString())
        .doesNotContain("secret")
        .doesNotContain("4242")
        .contains("Authorization");
  }

  @Test
  void headersSurviveTheirTextColumn() {
    Map<String, String> headers = new java.util.LinkedHashMap<>();
    headers.put("Content-Type", "application/json; charset=utf-8");
    headers.put("X-Empty", "");
    headers.put("X-Colon", "a:b: c");
    assertThat(HeaderLines.decode(HeaderLines.encode(headers))).containsExactlyEntriesOf(headers);
    assertThat(HeaderLines.decode(HeaderLines.encode(Map.of()))).isEmpty();
  }
}
