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
import org.springframework.beans.factory.BeanFactory;

/**
 * JSON for {@link Idempotent} methods with the application's Jackson 2 {@link ObjectMapper}, the
 * JSON of Boot 3 applications: the default codec of their results and the form their fingerprinted
 * arguments are hashed in. Apart from the rest so that Jackson stays an optional dependency. One
 * copy per Boot line because Boot 4 applications have a Jackson 3 mapper instead (src/boot4/java).
 */
final class JacksonMethodJson {

  /** The class that must be present for this one to load. */
  static final String MAPPER_CLASS = "com.fasterxml.jackson.databind.ObjectMapper";

  /** What to add when it is not. */
  static final String DEPENDENCY =
      "com.fasterxml.jackson.core:jackson-databind, which spring-boot-starter-json brings";

  private JacksonMethodJson() {}

  /** With the application's {@link ObjectMapper}, or a default one. */
  static IdempotentMethods.Json of(BeanFactory beans) {
    ObjectMapper mapper =
        beans
            .getBeanProvider(ObjectMapper.class)
            .getIfAvailable(() -> new ObjectMapper().findAndRegisterModules());
    return new IdempotentMethods.Json(writer(mapper), type -> codec(mapper, type));
  }

  /**
   * Stores a result as JSON and reads it back as {@code type}, the method's generic return type (so
   * a {@code List<Receipt>} comes back as receipts, not maps).
   */
  private static ResultCodec<Object> codec(ObjectMapper mapper, Type type) {
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
  private static Function<List<@Nullable Object>, byte[]> writer(ObjectMapper mapper) {
    return values -> {
      try {
        return mapper.writeValueAsBytes(values);
      } catch (JsonProcessingException e) {
        throw new UncheckedIOException(e);
      }
    };
  }
}
