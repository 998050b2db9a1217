package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.RouteOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The {@code once.defaults.*} rows of {@code docs/spring-boot.md} (between the {@code route-options}
 * markers) are rendered from once-http's {@link RouteOptions} table, so the docs cannot describe an
 * option, or a default, other than the one in force.
 */
class RouteOptionsDocTest {

  private static final Path DOC = Path.of("../docs/spring-boot.md");
  private static final String BEGIN = "<!-- route-options:begin -->\n";
  private static final String END = "<!-- route-options:end -->";

  @Test
  void theRouteOptionRowsAreTheTables() throws Exception {
    String doc = Files.readString(DOC);
    int begin = doc.indexOf(BEGIN);
    int end = doc.indexOf(END);
    assertThat(begin).as("%s has the line %s", DOC, BEGIN.strip()).isNotNegative();
    assertThat(end).as("%s has the line %s after the begin marker", DOC, END).isGreaterThan(begin);

    String rows = RouteOptions.all().stream()
        .map(o -> "| `once.defaults." + o.name() + "` | `" + o.defaultValue() + "` | " + o.description() + " |\n")
        .collect(Collectors.joining());
    String expected = "| property | default | meaning |\n|---|---|---|\n" + rows;

    assertThat(doc.substring(begin + BEGIN.length(), end))
        .as("the route-options section of %s, which should read:%n%s", DOC, expected)
        .isEqualTo(expected);
  }
}
