package dev.once.spring;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JavaType;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.ResultCodec;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Type;
import java.util.List;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;

/**
 * JSON for {@link Idempotent} methods, with the application's {@link ObjectMapper}: the default
 * codec of their results and the form their fingerprinted arguments are hashed in. Apart from the
 * rest so that Jackson stays an optional dependency.
 */
final class JacksonMethodJson {

  private JacksonMethodJson() {}

  /**
   * Stores a result as JSON and reads it back as {@code type}, the method's generic return type (so
   * a {@code List<Receipt>} comes back as receipts, not maps).
   */
  static ResultCodec<Object> codec(ObjectMapper mapper, Type type) {
    JavaType javaType = mapper.getTypeFactory().constructType(type);
    return new ResultCodec<>() {
      @Override
      public byte[] encode(@Nullable Object value) {
        try {
          return mapper.writerFor(javaType).writeValueAsBytes(value);
        } catch (JsonProcessingException e) {
          // The engine catches it: the call counts as done, retries get "result unavailable".
          throw new UncheckedIOException(e);
        }
      }

      @Override
      public Object decode(byte[] bytes) {
        try {
          return mapper.readValue(bytes, javaType);
        } catch (IOException e) {
          throw new UncheckedIOException(e);
        }
      }
    };
  }

  /**
   * Writes the fingerprinted values as one JSON array; the fingerprinter canonicalises it (RFC
   * 8785), so member order and number spelling do not matter.
   */
  static Function<List<@Nullable Object>, byte[]> writer(ObjectMapper mapper) {
    return values -> {
      try {
        return mapper.writeValueAsBytes(values);
      } catch (JsonProcessingException e) {
        throw new UncheckedIOException(e);
      }
    };
  }
}
