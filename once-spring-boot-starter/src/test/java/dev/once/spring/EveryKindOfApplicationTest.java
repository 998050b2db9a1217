package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.Once;
import dev.once.http.HttpIdempotency;
import dev.once.webflux.OnceWebFilter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.ReactiveWebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

/**
 * Every kind of application gets the engine and the operator's tools; each gets the filter of its
 * own web stack and nothing of another. (once-spring-apps starts such applications on class paths
 * that really lack the servlet API; here the class loader only hides it from the conditions.)
 */
@ExtendWith(OutputCaptureExtension.class)
class EveryKindOfApplicationTest {

  private static final AutoConfigurations ALL =
      AutoConfigurations.of(
          OnceAutoConfiguration.class,
          OnceServletAutoConfiguration.class,
          OnceReactiveAutoConfiguration.class,
          OnceMethodsAutoConfiguration.class);

  @Test
  void aReactiveApplicationWithoutTheServletApiGetsTheWebFilterAndTheEndpoint() {
    new ReactiveWebApplicationContextRunner()
        .withConfiguration(ALL)
        .withClassLoader(new FilteredClassLoader("jakarta.servlet"))
        .withPropertyValues("once.store.type=memory")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(OnceWebFilter.class);
              assertThat(context).hasSingleBean(OnceEndpoint.class);
              assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
            });
  }

  @Test
  void aReactiveApplicationWithoutOnceWebFluxIsToldWhichArtifactGuardsItsRequests(
      CapturedOutput output) {
    new ReactiveWebApplicationContextRunner()
        .withConfiguration(ALL)
        .withClassLoader(new FilteredClassLoader("jakarta.servlet", "dev.once.webflux"))
        .withPropertyValues("once.store.type=memory")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(Once.class);
              assertThat(output).contains("dev.once:once-webflux is not on the class path");
            });
  }

  @Test
  void aNonWebApplicationGetsTheEngineAndTheEndpointButNoHttpLayer() {
    new ApplicationContextRunner()
        .withConfiguration(ALL)
        .withClassLoader(new FilteredClassLoader("jakarta.servlet", "org.springframework.web"))
        .withPropertyValues("once.store.type=memory")
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              assertThat(context).hasSingleBean(Once.class);
              assertThat(context).hasSingleBean(OnceEndpoint.class);
              assertThat(context).doesNotHaveBean(HttpIdempotency.class);
              assertThat(context).doesNotHaveBean(OnceWebFilter.class);
              assertThat(context).doesNotHaveBean(FilterRegistrationBean.class);
            });
  }
}
