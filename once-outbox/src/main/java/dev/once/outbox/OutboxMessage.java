package dev.once.outbox;

import dev.once.IdempotencyKey;
import dev.once.InvalidIdempotencyKeyException;
import dev.once.internal.HttpToken;
import java.util.Arrays;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * A message to send once its business transaction commits.
 *
 * <pre>{@code
 * OutboxMessage m = OutboxMessage.builder("order-42-confirmed", "https://mail.internal/send")
 *     .header("Content-Type", "application/json")
 *     .payload(json)
 *     .build();
 * }</pre>
 *
 * @param id a stable id, unique in its outbox: 1–255 printable ASCII characters. The downstream
 *     {@code Idempotency-Key} derives from it ({@link Outbox#idempotencyKey(String)}), so a message
 *     written again for the same business event must carry the same id
 * @param destination where it goes: an HTTP URI (absolute, or relative to the delivery's base URI)
 *     or a Kafka topic; 1–1024 characters without control characters
 * @param key the Kafka record key (partitioning and compaction), or {@code null}; ignored by HTTP
 * @param headers header names (HTTP tokens) and values (no control characters), in order
 * @param payload the body; copied in and out, never shared
 */
public record OutboxMessage(
    String id,
    String destination,
    @Nullable String key,
    Map<String, String> headers,
    byte[] payload) {

  private static final int MAX_DESTINATION = 1024;
  private static final int MAX_KEY = 1024;

  public OutboxMessage {
    try {
      IdempotencyKey.of(id);
    } catch (InvalidIdempotencyKeyException e) {
      throw new IllegalArgumentException(
          "id must be 1-255 printable ASCII characters: " + e.getMessage(), e);
    }
    requireText("destination", destination, MAX_DESTINATION);
    if (key != null) {
      requireText("key", key, MAX_KEY);
    }
    if (headers == null) {
      throw new IllegalArgumentException("headers must not be null (use an empty map)");
    }
    headers.forEach(OutboxMessage::requireHeader);
    headers = Collections.unmodifiableMap(new LinkedHashMap<>(headers));
    if (payload == null) {
      throw new IllegalArgumentException("payload must not be null (use an empty array)");
    }
    payload = payload.clone();
  }

  /** A message with no key and no headers. */
  public static OutboxMessage of(String id, String destination, byte[] payload) {
    return new OutboxMessage(id, destination, null, Map.of(), payload);
  }

  /** A builder; {@link Builder#build()} validates. */
  public static Builder builder(String id, String destination) {
    return new Builder(id, destination);
  }

  /** A copy of the payload. */
  @Override
  public byte[] payload() {
    return payload.clone();
  }

  /** The payload's length, without copying it. */
  public int payloadLength() {
    return payload.length;
  }

  byte[] payloadUnsafe() {
    return payload;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof OutboxMessage m
        && id.equals(m.id)
        && destination.equals(m.destination)
        && java.util.Objects.equals(key, m.key)
        && headers.equals(m.headers)
        && Arrays.equals(payload, m.payload);
  }

  @Override
  public int hashCode() {
    return java.util.Objects.hash(id, destination, key, headers, Arrays.hashCode(payload));
  }

  @Override
  public String toString() {
    // Never the payload or header values: they may carry personal data or secrets.
    return "OutboxMessage[id="
        + id
        + ", destination="
        + destination
        + ", headers="
        + headers.keySet()
        + ", payload="
        + payload.length
        + " bytes]";
  }

  private static void requireText(String option, String value, int max) {
    if (value == null || value.isEmpty() || value.length() > max) {
      throw new IllegalArgumentException(
          option
              + " must be 1-"
              + max
              + " characters; was "
              + (value == null ? "null" : value.length() + " characters"));
    }
    for (int i = 0; i < value.length(); i++) {
      if (Character.isISOControl(value.charAt(i))) {
        throw new IllegalArgumentException(
            option + " must not contain control characters; one is at index " + i);
      }
    }
  }

  private static void requireHeader(String name, String value) {
    if (name == null || !HttpToken.is(name, 256)) {
      throw new IllegalArgumentException("header name must be an HTTP token; was '" + name + "'");
    }
    if (name.equalsIgnoreCase(Outbox.IDEMPOTENCY_KEY_HEADER)) {
      throw new IllegalArgumentException(
          "header " + name + " is derived from the message id by the relay; do not set it");
    }
    if (value == null) {
      throw new IllegalArgumentException("header " + name + " has no value");
    }
    for (int i = 0; i < value.length(); i++) {
      char c = value.charAt(i);
      if (c != '\t' && Character.isISOControl(c)) {
        throw new IllegalArgumentException(
            "header " + name + " must not contain control characters");
      }
    }
  }

  /** Options of an {@link OutboxMessage}. */
  public static final class Builder {

    private final String id;
    private final String destination;
    private @Nullable String key;
    private final Map<String, String> headers = new LinkedHashMap<>();
    private byte @Nullable [] payload = new byte[0];

    private Builder(String id, String destination) {
      this.id = id;
      this.destination = destination;
    }

    /** The Kafka record key; default none. */
    public Builder key(String key) {
      this.key = key;
      return this;
    }

    /**
     * Adds a header (replacing one of the same name). {@code Idempotency-Key} is set by the relay.
     */
    public Builder header(String name, String value) {
      headers.put(name, value);
      return this;
    }

    /** The body; default empty. */
    public Builder payload(byte @Nullable [] payload) {
      this.payload = payload;
      return this;
    }

    /** The body as UTF-8. */
    public Builder payload(@Nullable String utf8) {
      this.payload = utf8 == null ? null : utf8.getBytes(java.nio.charset.StandardCharsets.UTF_8);
      return this;
    }

    @SuppressWarnings(
        "NullAway") // safe: the record refuses a null payload with an IllegalArgumentException
    public OutboxMessage build() {
      return new OutboxMessage(id, destination, key, headers, payload);
    }
  }
}
