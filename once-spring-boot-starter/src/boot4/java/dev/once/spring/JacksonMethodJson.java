package dev.once.spring;

import dev.once.ResultCodec;
import java.lang.reflect.Type;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.json.JsonMapper;

/**
 * JSON for {@link Idempotent} methods with the application's Jackson 3 {@link JsonMapper}, the JSON
 * of Boot 4 applications: the default codec of their results and the form their fingerprinted
 * arguments are hashed in. Apart from the rest so that Jackson stays an optional dependency. One
 * copy per Boot line because Boot 3 applications have a Jackson 2 mapper instead (src/boot3/java).
 * Jackson 3's exceptions are unchecked: the engine catches a codec's (the call counts as done,
 * retries get "result unavailable"), {@link MethodPlan} a writer's (the key is invalid).
 */
final class JacksonMethodJson {

  /** The class that must be present for this one to load. */
  static final String MAPPER_CLASS = "tools.jackson.databind.json.JsonMapper";

  /** What to add when it is not. */
  static final String DEPENDENCY =
      "tools.jackson.core:jackson-databind, which spring-boot-starter-jackson brings";

  private JacksonMethodJson() {}

  /** With the application's {@link JsonMapper}, or a default one. */
  static IdempotentMethods.Json of(BeanFactory beans) {
    JsonMapper mapper =
        beans
            .getBeanProvider(JsonMapper.class)
            .getIfAvailable(() -> JsonMapper.builder().findAndAddModules().build());
    // Fingerprints: the values as one JSON array, which the fingerprinter canonicalises (RFC 8785).
    return new IdempotentMethods.Json(mapper::writeValueAsBytes, type -> codec(mapper, type));
  }

  /**
   * Stores a result as JSON and reads it back as {@code type}, the method's generic return type (so
   * a {@code List<Receipt>} comes back as receipts, not maps).
   */
  private static ResultCodec<Object> codec(JsonMapper mapper, Type type) {
    JavaType javaType = mapper.getTypeFactory().constructType(type);
    return new ResultCodec<>() {
      @Override
      public byte[] encode(@Nullable Object value) {
        return mapper.writerFor(javaType).writeValueAsBytes(value);
      }

      @Override
      public Object decode(byte[] bytes) {
        return mapper.readValue(bytes, javaType);
      }
    };
  }
}
