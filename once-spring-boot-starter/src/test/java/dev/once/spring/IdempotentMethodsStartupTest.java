package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.ResultCodec;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Flux;

/** An {@code @Idempotent} method that cannot work stops the application, naming itself. */
class IdempotentMethodsStartupTest {

  private final ApplicationContextRunner runner =
      new ApplicationContextRunner()
          .withPropertyValues("once.store.type=memory")
          .withConfiguration(
              AutoConfigurations.of(
                  AopAutoConfiguration.class,
                  BootLine.JACKSON,
                  OnceAutoConfiguration.class,
                  OnceMethodsAutoConfiguration.class));

  public static class BadSyntax {
    @Idempotent(key = "#order.id +")
    public String charge(String order) {
      return order;
    }
  }

  public static class Stream {
    @Idempotent(key = "#p0")
    public Flux<String> charges(String id) {
      return Flux.just(id);
    }
  }

  public static class HttpAttribute {
    @Idempotent(key = "#p0", keyRequired = true)
    public String charge(String id) {
      return id;
    }
  }

  @Idempotent(key = "#p0")
  public static class KeyOnType {
    public String charge(String id) {
      return id;
    }
  }

  public static class NoKey {
    @Idempotent(fingerprint = "#p0")
    public String charge(String id) {
      return id;
    }
  }

  public static class BadLease {
    @Idempotent(key = "#p0", lease = "5ms")
    public String charge(String id) {
      return id;
    }
  }

  public static class UnknownCodec {
    @Idempotent(key = "#p0", codec = "missingCodec")
    public String charge(String id) {
      return id;
    }
  }

  public static class Upper {
    int runs;

    @Idempotent(key = "#p0", codec = "upperCodec")
    public String charge(String id) {
      runs++;
      return id;
    }
  }

  @Configuration(proxyBeanMethods = false)
  static class UpperConfig {
    @Bean
    Upper upper() {
      return new Upper();
    }

    /** Stores in upper case, so a replay shows the codec's hand. */
    @Bean
    ResultCodec<String> upperCodec() {
      return new ResultCodec<>() {
        @Override
        public byte[] encode(String value) {
          return value.toUpperCase(java.util.Locale.ROOT).getBytes(StandardCharsets.UTF_8);
        }

        @Override
        public String decode(byte[] bytes) {
          return new String(bytes, StandardCharsets.UTF_8);
        }
      };
    }
  }

  private void refused(Class<?> bean, String... messageParts) {
    runner
        .withBean(bean)
        .run(
            context -> {
              assertThat(context).hasFailed();
              Throwable cause = context.getStartupFailure();
              while (cause != null && !(cause instanceof InvalidOncePropertyException)) {
                cause = cause.getCause();
              }
              assertThat(cause).as("an InvalidOncePropertyException in the chain").isNotNull();
              assertThat(cause.getMessage()).contains(messageParts);
            });
  }

  @Test
  void aKeyThatIsNotSpelStopsStartup() {
    refused(BadSyntax.class, "@Idempotent(key) on BadSyntax#charge", "SpEL");
  }

  @Test
  void aFluxIsRefused() {
    refused(Stream.class, "Stream#charges", "Flux");
  }

  @Test
  void anHttpAttributeOnAMethodCallIsRefused() {
    refused(HttpAttribute.class, "@Idempotent(keyRequired) on HttpAttribute#charge");
  }

  @Test
  void aKeyOnAClassIsRefused() {
    refused(KeyOnType.class, "KeyOnType", "belongs on a method");
  }

  @Test
  void methodAttributesWithoutAKeyAreRefused() {
    refused(NoKey.class, "NoKey#charge", "need a key expression");
  }

  @Test
  void anInvalidPolicyIsRefusedThroughTheCoreBuilders() {
    refused(BadLease.class, "@Idempotent(lease) on BadLease#charge");
  }

  @Test
  void anUnknownCodecBeanIsRefused() {
    refused(UnknownCodec.class, "@Idempotent(codec) on UnknownCodec#charge", "missingCodec");
  }

  @Test
  void aNamedCodecBeanStoresTheResult() {
    runner
        .withUserConfiguration(UpperConfig.class)
        .run(
            context -> {
              Upper upper = context.getBean(Upper.class);
              assertThat(upper.charge("abc")).isEqualTo("abc");
              assertThat(upper.charge("abc")).isEqualTo("ABC");
              assertThat(context.getBean(Upper.class).charge("abc")).isEqualTo("ABC");
            });
  }
}
