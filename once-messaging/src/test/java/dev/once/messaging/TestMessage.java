package dev.once.messaging;

import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;

/** A broker-neutral message for tests: an id, headers and a payload. */
record TestMessage(String id, Map<String, String> headers, byte[] payload) {

  static final MessageReader<TestMessage> READER =
      new MessageReader<>() {
        @Override
        public Optional<String> messageId(TestMessage message) {
          return Optional.ofNullable(message.id());
        }

        @Override
        public Optional<String> header(TestMessage message, String name) {
          return Optional.ofNullable(message.headers().get(name));
        }

        @Override
        public byte[] payload(TestMessage message) {
          return message.payload();
        }
      };

  /** A message keyed by the default header. */
  static TestMessage keyed(String key, String payload) {
    return new TestMessage(
        "id-" + key,
        Map.of(KeyExtractor.DEFAULT_HEADER, key),
        payload.getBytes(StandardCharsets.UTF_8));
  }

  String text() {
    return new String(payload, StandardCharsets.UTF_8);
  }
}
