package dev.once.spring;

import dev.once.http.RouteOptions;
import dev.once.http.kit.OptionDocs;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * The {@code once.defaults.*} rows of {@code docs/spring-boot.md} (between the {@code
 * route-options} markers) are rendered from once-http's {@link RouteOptions} table, so the docs
 * cannot describe an option, or a default, other than the one in force.
 */
class RouteOptionsDocTest {

  @Test
  void theRouteOptionRowsAreTheTables() throws Exception {
    OptionDocs.assertTable(Path.of("../docs/spring-boot.md"), "property", "once.defaults.", "");
  }
}
