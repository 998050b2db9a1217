package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Once;
import dev.once.micrometer.OnceMetrics;
import dev.once.servlet.TransactionBoundary;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.jdbc.PostgresStore;
import dev.once.store.redis.RedisStore;
import dev.once.tck.RequiredServices;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.assertj.AssertableWebApplicationContext;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RestController;

/** How the auto-configuration reads properties, refuses bad ones and chooses its store. */
@org.junit.jupiter.api.extension.ExtendWith(
    org.springframework.boot.test.system.OutputCaptureExtension.class)
class OnceAutoConfigurationTest {

  private final WebApplicationContextRunner runner =
      new WebApplicationContextRunner()
          .withConfiguration(
              AutoConfigurations.of(
                  OnceAutoConfiguration.class,
                  OnceServletAutoConfiguration.class,
                  OnceMetricsAutoConfiguration.class));

  private static InvalidOncePropertyException refusal(AssertableWebApplicationContext context) {
    assertThat(context).hasFailed();
    Throwable t = context.getStartupFailure();
    while (t != null && !(t instanceof InvalidOncePropertyException)) {
      t = t.getCause();
    }
    assertThat(t)
        .as("an InvalidOncePropertyException among the causes of %s", context.getStartupFailure())
        .isNotNull();
    return (InvalidOncePropertyException) t;
  }

  @Test
  void aValueTheCoreRefusesStopsStartupNamingTheProperty() {
    runner
        .withPropertyValues("once.defaults.lease=5ms")
        .run(
            context -> {
              InvalidOncePropertyException e = refusal(context);
              assertThat(e.getProperty()).isEqualTo("once.defaults.lease");
              assertThat(e.getMessage()).contains("PT0.005S").contains("lease must be between");
            });
  }

  @Test
  void aRoutePatternTheCoreRefusesIsNamed() {
    runner
        .withPropertyValues("once.routes[0].pattern=api/payments")
        .run(
            context ->
                assertThat(refusal(context).getProperty()).isEqualTo("once.routes[0].pattern"));
  }

  @Test
  void aRouteWithoutAPatternIsNamed() {
    runner
        .withPropertyValues("once.routes[0].key-required=true")
        .run(
            context ->
                assertThat(refusal(context).getProperty()).isEqualTo("once.routes[0].pattern"));
  }

  @Test
  void contradictoryOptionsNameTheRoute() {
    runner
        .withPropertyValues(
            "once.routes[0].pattern=/api/x", "once.routes[0].lease=10s", "once.routes[0].ttl=5s")
        .run(
            context -> {
              InvalidOncePropertyException e = refusal(context);
              assertThat(e.getProperty()).isEqualTo("once.routes[0]");
              assertThat(e.getReason()).contains("ttl").contains("lease");
            });
  }

  @Test
  void aSafeMethodInTheDefaultsIsRefused() {
    runner
        .withPropertyValues("once.defaults.methods=POST,GET")
        .run(
            context ->
                assertThat(refusal(context).getProperty()).isEqualTo("once.defaults.methods"));
  }

  @Test
  void routeCustomizersChangeEveryRoutePolicyAfterThePropertiesInOrder() {
    dev.once.OutcomeClassifier<dev.once.http.StoredResponse> own =
        new dev.once.OutcomeClassifier<>() {};
    runner
        .withPropertyValues(
            "once.defaults.lease=5s",
            "once.routes[0].pattern=/api/quotes",
            "once.routes[0].replay=stripe")
        .withBean(
            "first",
            OnceRouteCustomizer.class,
            () ->
                (pattern, policy) ->
                    pattern.equals("/api/quotes")
                        ? policy.toBuilder().classifier(own).build()
                        : policy)
        .withBean(
            "second",
            OnceRouteCustomizer.class,
            () -> (pattern, policy) -> policy.toBuilder().keyRequired(true).build())
        .run(
            context -> {
              dev.once.http.HttpIdempotency http =
                  context.getBean(dev.once.http.HttpIdempotency.class);
              dev.once.http.RoutePolicy quotes = http.route("/api/quotes").policy();
              dev.once.http.RoutePolicy rest = http.route("/elsewhere").policy();

              assertThat(quotes.classifier()).isSameAs(own);
              assertThat(quotes.keyRequired()).isTrue();
              assertThat(quotes.execution().lease()).isEqualTo(java.time.Duration.ofSeconds(5));
              assertThat(rest.classifier()).isEqualTo(dev.once.http.HttpOutcomes.DEFAULT);
              assertThat(rest.keyRequired()).isTrue();
            });
  }

  @Test
  void aRouteCustomizerThatAnswersNothingStopsTheApplicationNamingIt() {
    runner
        .withBean(OnceRouteCustomizer.class, () -> (pattern, policy) -> null)
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageContaining("returned no policy for /**"));
  }

  @Test
  void aScopeResolverBeanReplacesOnlyTheScopeAndTheRoutesStillComeFromTheProperties() {
    runner
        .withPropertyValues(
            "once.routes[0].pattern=/api/orders", "once.routes[0].key-required=true")
        .withBean(
            dev.once.http.ScopeResolver.class,
            () -> request -> "tenant:" + request.principal() + ":from-the-bean")
        .run(
            context -> {
              dev.once.http.HttpIdempotency http =
                  context.getBean(dev.once.http.HttpIdempotency.class);
              dev.once.http.Route route = http.route("/api/orders");

              dev.once.http.Decision withoutKey =
                  http.begin(route, incoming(dev.once.http.Headers.EMPTY));
              assertThat(withoutKey).isInstanceOf(dev.once.http.Decision.Respond.class);

              dev.once.http.Decision withKey =
                  http.begin(
                      route,
                      incoming(
                          dev.once.http.Headers.builder()
                              .add("Idempotency-Key", "k-" + System.nanoTime())
                              .build()));
              assertThat(withKey).isInstanceOf(dev.once.http.Decision.Proceed.class);
              dev.once.http.Exchange exchange =
                  ((dev.once.http.Decision.Proceed) withKey).exchange();
              try {
                assertThat(exchange.scope().value()).contains("tenant:alice:from-the-bean");
              } finally {
                exchange.fail();
              }
            });
  }

  private static dev.once.http.IncomingRequest incoming(dev.once.http.Headers headers) {
    return new dev.once.http.IncomingRequest(
        "POST",
        "/api/orders",
        null,
        headers,
        "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8),
        "alice");
  }

  @Test
  void aGlobalScopeIsWarnedAboutOnceAtStartup(
      org.springframework.boot.test.system.CapturedOutput output) {
    runner
        .withPropertyValues("once.scope.type=global")
        .run(context -> assertThat(context).hasNotFailed());

    assertThat(output.getAll())
        .containsOnlyOnce("idempotency keys are not tenant-scoped (once.scope.type=global)");
  }

  @Test
  void anOptionalTenantIsWarnedAboutAndARequiredOneIsNot(
      org.springframework.boot.test.system.CapturedOutput output) {
    String shared = "keyed requests that name no tenant (no Api-Key header) share one key space";
    runner.run(context -> assertThat(context).hasNotFailed());

    assertThat(output.getAll()).doesNotContain("not tenant-scoped").containsOnlyOnce(shared);

    runner
        .withPropertyValues("once.scope.required=true")
        .run(
            context -> {
              dev.once.http.HttpIdempotency http =
                  context.getBean(dev.once.http.HttpIdempotency.class);
              dev.once.http.Decision noTenant =
                  http.begin(
                      http.route("/api/orders"),
                      dev.once.http.IncomingRequest.of(
                          "POST",
                          "/api/orders",
                          dev.once.http.Headers.builder()
                              .add("Idempotency-Key", "k-" + System.nanoTime())
                              .build(),
                          "{}".getBytes(java.nio.charset.StandardCharsets.UTF_8)));
              assertThat(noTenant).isInstanceOf(dev.once.http.Decision.Respond.class);
              assertThat(((dev.once.http.Decision.Respond) noTenant).response().status())
                  .isEqualTo(400);
            });

    assertThat(output.getAll()).containsOnlyOnce(shared);
  }

  @Test
  void aBlankScopeHeaderIsRefused() {
    runner
        .withPropertyValues("once.scope.header= ")
        .run(context -> assertThat(refusal(context).getProperty()).isEqualTo("once.scope.header"));
  }

  @Test
  void theFailureAnalysisTellsWhichPropertyToFix() {
    InvalidOncePropertyException e =
        new InvalidOncePropertyException("once.defaults.ttl", "0s", "ttl must be between");

    FailureAnalysis analysis =
        new InvalidOncePropertyFailureAnalyzer().analyze(new RuntimeException(e));

    assertThat(analysis.getDescription()).contains("once.defaults.ttl").contains("0s");
    assertThat(analysis.getAction()).contains("once.defaults.ttl");
  }

  @RestController
  static class BadController {
    @PostMapping("/api/bad")
    @Idempotent(lease = "soon")
    String create() {
      return "never";
    }
  }

  @RestController
  static class TwoHandlersOnePath {
    @PostMapping("/api/orders")
    @Idempotent(lease = "10s")
    String create() {
      return "created";
    }

    @org.springframework.web.bind.annotation.PatchMapping("/api/orders")
    @Idempotent(lease = "20s")
    String amend() {
      return "amended";
    }
  }

  @Test
  void twoHandlersOnOnePathWithDifferentSettingsStopStartup() {
    runner
        .withConfiguration(AutoConfigurations.of(BootLine.WEB_MVC))
        .withUserConfiguration(TwoHandlersOnePath.class)
        .run(
            context ->
                assertThat(refusal(context).getReason())
                    .contains("/api/orders")
                    .contains("different settings"));
  }

  @Test
  void aBadAnnotationAttributeStopsStartupNamingTheMethod() {
    runner
        .withConfiguration(AutoConfigurations.of(BootLine.WEB_MVC))
        .withUserConfiguration(BadController.class)
        .run(
            context ->
                assertThat(refusal(context).getProperty())
                    .isEqualTo("@Idempotent(lease) on BadController#create"));
  }

  @Configuration(proxyBeanMethods = false)
  static class OwnStore {
    @Bean
    IdempotencyStore myStore() {
      return InMemoryStore.builder().maxRecords(10).build();
    }
  }

  @Test
  void theApplicationsOwnStoreWins() {
    runner
        .withUserConfiguration(OwnStore.class)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBeansOfType(IdempotencyStore.class))
                  .containsOnlyKeys("myStore");
            });
  }

  @Test
  void withoutADataSourceTheStoreIsInMemory() {
    runner.run(
        context -> {
          assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryStore.class);
          assertThat(context).hasSingleBean(Once.class);
          assertThat(context).hasSingleBean(FilterRegistrationBean.class);
        });
  }

  @Test
  void anUnsupportedDatabaseFallsBackToMemory() {
    runner
        .withConfiguration(AutoConfigurations.of(BootLine.DATA_SOURCE))
        .withPropertyValues("spring.datasource.url=jdbc:h2:mem:once-fallback")
        .run(
            context ->
                assertThat(context.getBean(IdempotencyStore.class))
                    .isInstanceOf(InMemoryStore.class));
  }

  @Test
  void withoutOnceStoreJdbcADataSourceIsIgnored() {
    runner
        .withConfiguration(
            AutoConfigurations.of(BootLine.DATA_SOURCE, BootLine.DATA_SOURCE_TRANSACTIONS))
        .withClassLoader(new FilteredClassLoader("dev.once.store.jdbc"))
        .withPropertyValues("spring.datasource.url=jdbc:h2:mem:once-nojdbc")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(InMemoryStore.class);
            });
  }

  @Test
  void aPostgresDataSourceGetsThePostgresStoreAndTransactionalRoutes() throws Exception {
    PostgresService.require();
    String table = PostgresService.freshTable("once_records_starter_autoconfig");
    runner
        .withConfiguration(
            AutoConfigurations.of(BootLine.DATA_SOURCE, BootLine.DATA_SOURCE_TRANSACTIONS))
        .withPropertyValues(
            "spring.datasource.url=" + PostgresService.URL,
            "spring.datasource.username=postgres",
            "once.store.table-name=" + table,
            "once.routes[0].pattern=/api/payments",
            "once.routes[0].transactional=true")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(PostgresStore.class);
              assertThat(context.getBean(TransactionBoundary.class))
                  .isInstanceOf(SpringTransactionBoundary.class);
            });
    PostgresService.drop(table);
  }

  @Test
  void aLettuceConnectionFactoryGetsTheRedisStore() {
    RequiredServices.requireReachable("Redis", "127.0.0.1", 6379);
    runner
        .withConfiguration(AutoConfigurations.of(BootLine.REDIS))
        .withPropertyValues(
            "spring.data.redis.host=127.0.0.1",
            "spring.data.redis.port=6379",
            "once.store.redis.key-prefix=once-autoconfig:",
            "once.store.redis.command-timeout=3s",
            "once.store.redis.batches-at-once=2")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(RedisStore.class);
              assertThat(context.getBean(IdempotencyStore.class).batchesAtOnce()).isEqualTo(2);
            });
  }

  @Test
  void storeTypeRedisBeatsADataSource() {
    RequiredServices.requireReachable("Redis", "127.0.0.1", 6379);
    runner
        .withConfiguration(AutoConfigurations.of(BootLine.REDIS, BootLine.DATA_SOURCE))
        .withPropertyValues(
            "spring.data.redis.host=127.0.0.1",
            "spring.datasource.url=jdbc:h2:mem:once-redis-wins",
            "once.store.type=redis")
        .run(
            context ->
                assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(RedisStore.class));
  }

  @Test
  void anUnsupportedDatabaseDoesNotHideRedis() {
    RequiredServices.requireReachable("Redis", "127.0.0.1", 6379);
    runner
        .withConfiguration(AutoConfigurations.of(BootLine.REDIS, BootLine.DATA_SOURCE))
        .withPropertyValues(
            "spring.data.redis.host=127.0.0.1",
            "spring.datasource.url=jdbc:h2:mem:once-h2-and-redis")
        .run(
            context ->
                assertThat(context.getBean(IdempotencyStore.class)).isInstanceOf(RedisStore.class));
  }

  @Test
  void storeTypeJdbcOnAnUnsupportedDatabaseStopsStartup() {
    runner
        .withConfiguration(AutoConfigurations.of(BootLine.DATA_SOURCE))
        .withPropertyValues(
            "spring.datasource.url=jdbc:h2:mem:once-jdbc-h2", "once.store.type=jdbc")
        .run(context -> assertThat(refusal(context).getReason()).contains("H2"));
  }

  @Test
  void aBadRedisPropertyIsNamed() {
    runner
        .withConfiguration(AutoConfigurations.of(BootLine.REDIS))
        .withPropertyValues(
            "spring.data.redis.host=127.0.0.1", "once.store.redis.command-timeout=-1s")
        .run(
            context ->
                assertThat(refusal(context).getProperty())
                    .isEqualTo("once.store.redis.command-timeout"));
  }

  @Test
  void storeTypeRedisWithoutAConnectionFactoryStopsStartup() {
    runner
        .withPropertyValues("once.store.type=redis")
        .run(context -> assertThat(refusal(context).getProperty()).isEqualTo("once.store.type"));
  }

  @Test
  void storeTypeJdbcWithoutADataSourceStopsStartup() {
    runner
        .withPropertyValues("once.store.type=jdbc")
        .run(context -> assertThat(refusal(context).getReason()).contains("DataSource"));
  }

  @Test
  void withoutOnceStoreRedisAConnectionFactoryIsIgnored() {
    runner
        .withConfiguration(AutoConfigurations.of(BootLine.REDIS))
        .withClassLoader(new FilteredClassLoader("dev.once.store.redis"))
        .withPropertyValues("spring.data.redis.host=127.0.0.1")
        .run(
            context ->
                assertThat(context.getBean(IdempotencyStore.class))
                    .isInstanceOf(InMemoryStore.class));
  }

  private static final String KEY_B64 = java.util.Base64.getEncoder().encodeToString(new byte[32]);

  @Test
  void encryptionKeysWrapTheStoreInAnEncryptingStore() {
    runner
        .withPropertyValues("once.encryption.keys=k2:" + KEY_B64 + ",k1:" + KEY_B64)
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              OnceAutoConfiguration.StoreDecorator encryption =
                  context.getBean("onceEncryption", OnceAutoConfiguration.StoreDecorator.class);
              assertThat(encryption.apply(InMemoryStore.create()))
                  .isInstanceOf(dev.once.store.EncryptingStore.class);
            });
  }

  @Test
  void aMalformedKeyringIsNamedWithoutItsValue() {
    runner
        .withPropertyValues("once.encryption.keys=k1:not-base64-secret-material")
        .run(
            context -> {
              InvalidOncePropertyException e = refusal(context);
              assertThat(e.getProperty()).isEqualTo("once.encryption.keys");
              assertThat(e.getMessage()).doesNotContain("secret-material");
            });
  }

  @Test
  void aNewKeyLimitIsMappedAndValidated() {
    runner
        .withPropertyValues("once.new-keys.per-second=50", "once.new-keys.burst=100")
        .run(context -> assertThat(context).hasNotFailed());
    runner
        .withPropertyValues("once.new-keys.per-second=-1")
        .run(
            context ->
                assertThat(refusal(context).getProperty()).isEqualTo("once.new-keys.per-second"));
    runner
        .withPropertyValues("once.new-keys.per-second=5", "once.new-keys.burst=-3")
        .run(
            context -> assertThat(refusal(context).getProperty()).isEqualTo("once.new-keys.burst"));
    runner
        .withPropertyValues("once.new-keys.burst=10")
        .run(
            context ->
                assertThat(refusal(context).getProperty()).isEqualTo("once.new-keys.per-second"));
  }

  @Test
  void aTransactionalRouteWithoutATransactionalStoreStopsStartup() {
    runner
        .withPropertyValues(
            "once.routes[0].pattern=/api/payments", "once.routes[0].transactional=true")
        .run(
            context ->
                assertThat(refusal(context).getProperty())
                    .isEqualTo("once.routes[0].transactional"));
  }

  @Test
  void disabledMeansNoFilter() {
    runner
        .withPropertyValues("once.enabled=false")
        .run(context -> assertThat(context).doesNotHaveBean(FilterRegistrationBean.class));
  }

  @Configuration(proxyBeanMethods = false)
  static class Registry {
    @Bean
    SimpleMeterRegistry registry() {
      return new SimpleMeterRegistry();
    }
  }

  @Test
  void metricsAreRegisteredOnlyWhenThereIsARegistry() {
    runner.run(context -> assertThat(context).doesNotHaveBean(OnceMetrics.class));
    runner
        .withUserConfiguration(Registry.class)
        .run(
            context -> {
              assertThat(context).hasSingleBean(OnceMetrics.class);
              assertThat(
                      context.getBean(SimpleMeterRegistry.class).find("once.executions").counters())
                  .isNotEmpty();
            });
  }

  @Configuration(proxyBeanMethods = false)
  static class Observations {
    final java.util.List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Bean
    io.micrometer.observation.ObservationRegistry observationRegistry() {
      io.micrometer.observation.ObservationRegistry registry =
          io.micrometer.observation.ObservationRegistry.create();
      registry
          .observationConfig()
          .observationHandler(
              new io.micrometer.observation.ObservationHandler<>() {
                @Override
                public void onStop(io.micrometer.observation.Observation.Context context) {
                  seen.add(
                      context.getName()
                          + ":"
                          + context.getLowCardinalityKeyValue("operation").getValue());
                }

                @Override
                public boolean supportsContext(
                    io.micrometer.observation.Observation.Context context) {
                  return true;
                }
              });
      return registry;
    }
  }

  @Test
  void storeCallsAreObservedWhenThereIsAnObservationRegistry() {
    runner
        .withUserConfiguration(Observations.class)
        .run(
            context -> {
              Once once = context.getBean(Once.class);
              once.execute(
                  dev.once.Scope.of("m"),
                  dev.once.IdempotencyKey.of("k-observed"),
                  new dev.once.Fingerprint(1, "00".repeat(32)),
                  dev.once.ResultCodec.utf8(),
                  ctx -> "done");

              assertThat(context.getBean(Observations.class).seen)
                  .containsExactly("once.store:claim", "once.store:complete");
            });
  }

  @Test
  void theFilterRunsForRequestAndAsyncDispatchesInTheConfiguredOrder() {
    runner
        .withPropertyValues("once.filter.order=42", "once.filter.url-patterns=/api/*")
        .run(
            context -> {
              FilterRegistrationBean<?> f = context.getBean(FilterRegistrationBean.class);
              assertThat(f.getOrder()).isEqualTo(42);
              assertThat(f.getUrlPatterns()).containsExactly("/api/*");
              assertThat(f.isAsyncSupported()).isTrue();
              assertThat(Map.of("filter", f.getFilter())).isNotEmpty();
            });
  }
}
