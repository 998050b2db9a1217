package dev.once.apps.methods;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.apps.DocumentedDependencies;
import dev.once.apps.methods.ChargesApp.Charge;
import dev.once.apps.methods.ChargesApp.Charges;
import dev.once.apps.methods.ChargesApp.Receipt;
import org.junit.jupiter.api.Test;
import org.springframework.boot.SpringApplication;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * The non-web application of docs/spring-boot.md starts, with neither the servlet API nor Spring
 * MVC, and runs its {@code @Idempotent} method once per key.
 */
class ChargesAppTest {

  @Test
  void itsDependenciesAreThoseTheDocPageLists() throws Exception {
    DocumentedDependencies.assertPomMatches("spring-boot.md", "methods");
  }

  @Test
  void neitherTheServletApiNorSpringMvcIsOnTheClassPath() {
    assertThatThrownBy(() -> Class.forName("jakarta.servlet.Filter"))
        .isInstanceOf(ClassNotFoundException.class);
    assertThatThrownBy(() -> Class.forName("org.springframework.web.servlet.DispatcherServlet"))
        .isInstanceOf(ClassNotFoundException.class);
  }

  @Test
  void aSecondChargeWithTheSameRequestIdReturnsTheFirstReceiptWithoutRunning() {
    try (ConfigurableApplicationContext app = SpringApplication.run(ChargesApp.class)) {
      Charges charges = app.getBean(Charges.class);

      Receipt first = charges.charge(new Charge("req-1", 1250));
      Receipt again = charges.charge(new Charge("req-1", 1250));
      Receipt other = charges.charge(new Charge("req-2", 1250));

      assertThat(first).isEqualTo(new Receipt("req-1", 1250, 1));
      assertThat(again).isEqualTo(first);
      assertThat(other.run()).isEqualTo(2);
      assertThat(charges.runs()).isEqualTo(2);
    }
  }
}
