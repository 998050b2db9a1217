package dev.once.messaging;

import dev.once.protocol.WireProtocol;
import java.util.Objects;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * Where a message's idempotency key comes from: a header, or any function of the message. The value
 * must be a valid {@link dev.once.IdempotencyKey} (1–255 printable ASCII characters); anything else
 * gets the message rejected.
 *
 * @param <M> the broker's message type
 */
@FunctionalInterface
public interface KeyExtractor<M> {

  /** The header {@link #defaults()} reads. */
  String DEFAULT_HEADER = WireProtocol.KEY_HEADER;

  /** The raw key, or {@code null} if the message has none. */
  @Nullable String keyOf(M message, MessageReader<M> reader);

  /** The value of the header {@value #DEFAULT_HEADER}. */
  static <M> KeyExtractor<M> defaults() {
    return header(DEFAULT_HEADER);
  }

  /** The value of this header. */
  static <M> KeyExtractor<M> header(String name) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException(
          "header name must not be blank, was " + (name == null ? null : "'" + name + "'"));
    }
    return (message, reader) -> reader.header(message, name).orElse(null);
  }

  /** The message's id ({@link MessageReader#messageId}). */
  static <M> KeyExtractor<M> messageId() {
    return (message, reader) -> reader.messageId(message).orElse(null);
  }

  /** A function of the message, such as a business id read from its payload; null means none. */
  static <M> KeyExtractor<M> of(Function<? super M, String> function) {
    Objects.requireNonNull(function, "function");
    return (message, reader) -> function.apply(message);
  }
}
