package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.ResultCodec;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.aop.AopAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.test.util.AopTestUtils;
import org.springframework.transaction.annotation.EnableTransactionManagement;
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

  public static class FinalMethod {
    @Idempotent(key = "#p0")
    public final String charge(String id) {
      return id;
    }
  }

  public static class PrivateMethod {
    @Idempotent(key = "#p0")
    private String charge(String id) {
      return id;
    }

    public String chargeThroughThis(String id) {
      return charge(id);
    }
  }

  public static class StaticMethod {
    @Idempotent(key = "#p0")
    public static String charge(String id) {
      return id;
    }
  }

  public static final class FinalClass {
    @Idempotent(key = "#p0")
    public String charge(String id) {
      return id;
    }
  }

  public interface Charging {
    String charge(String id);
  }

  /**
   * Under interface proxies only {@code charge} is reachable: {@code refund} is on no interface.
   */
  public static class InterfaceOnly implements Charging {
    @Override
    @Idempotent(key = "#p0")
    public String charge(String id) {
      return id;
    }

    @Idempotent(key = "#p0")
    public String refund(String id) {
      return id;
    }
  }

  /** Interface proxies reach a final method that implements an interface's. */
  public static class FinalOnInterface implements Charging {
    int runs;

    @Override
    @Idempotent(key = "#p0")
    public final String charge(String id) {
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
        .run(context -> assertThat(refusal(context).getMessage()).contains(messageParts));
  }

  private static Throwable refusal(AssertableApplicationContext context) {
    assertThat(context).hasFailed();
    Throwable cause = context.getStartupFailure();
    while (cause != null && !(cause instanceof InvalidOncePropertyException)) {
      cause = cause.getCause();
    }
    assertThat(cause)
        .as("an InvalidOncePropertyException in the chain of %s", context.getStartupFailure())
        .isNotNull();
    return cause;
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
  void aFinalMethodIsRefusedNamingIt() {
    refused(FinalMethod.class, "@Idempotent(key) on FinalMethod#charge", "final method");
  }

  @Test
  void aPrivateMethodIsRefusedNamingIt() {
    refused(PrivateMethod.class, "@Idempotent(key) on PrivateMethod#charge", "private method");
  }

  @Test
  void aStaticMethodIsRefusedNamingIt() {
    refused(StaticMethod.class, "@Idempotent(key) on StaticMethod#charge", "static method");
  }

  @Test
  void aMethodOfAFinalClassIsRefusedNamingIt() {
    refused(FinalClass.class, "@Idempotent(key) on FinalClass#charge", "its class is final");
  }

  /**
   * An auto-proxy creator that proxies interfaces: Spring Boot registers none when {@code
   * spring.aop.proxy-target-class=false} and AspectJ is absent,
   * {@code @EnableTransactionManagement} does.
   */
  @Configuration(proxyBeanMethods = false)
  @EnableTransactionManagement(proxyTargetClass = false)
  static class InterfaceProxies {}

  @Test
  void aMethodOnNoInterfaceIsRefusedUnderInterfaceProxies() {
    runner
        .withPropertyValues("spring.aop.proxy-target-class=false")
        .withUserConfiguration(InterfaceProxies.class)
        .withBean(InterfaceOnly.class)
        .run(
            context ->
                assertThat(refusal(context).getMessage())
                    .contains("@Idempotent(key) on InterfaceOnly#refund", "interfaces"));
  }

  @Test
  void aFinalMethodAnInterfaceDeclaresIsGuardedUnderInterfaceProxies() {
    runner
        .withPropertyValues("spring.aop.proxy-target-class=false")
        .withUserConfiguration(InterfaceProxies.class)
        .withBean(FinalOnInterface.class)
        .run(
            context -> {
              Charging charging = context.getBean(Charging.class);
              charging.charge("abc");
              charging.charge("abc");
              FinalOnInterface target = AopTestUtils.getUltimateTargetObject(charging);
              assertThat(target.runs).isEqualTo(1);
            });
  }

  @Test
  void aBeanThatIsNotProxiedIsRefused() {
    runner
        .withPropertyValues("spring.aop.proxy-target-class=false")
        .withBean(Upper.class)
        .run(
            context ->
                assertThat(refusal(context).getMessage())
                    .contains("@Idempotent(key) on Upper#charge", "not proxied"));
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
