package dev.once.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.RouteOptions;
import dev.once.http.kit.OptionDocs;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** docs/gateway.md lists exactly the options the code declares, under the names the code reads. */
class DocsTest {

  private static final Path DOC = Path.of("../docs/gateway.md");

  @Test
  void theRouteTableIsRenderedFromTheOneOptionTable() throws IOException {
    OptionDocs.assertTable(
        DOC, "key", "", "| `pattern` | — (required in a route) | path pattern |\n");
  }

  @Test
  void everyGatewayOptionHasOneRowWithItsFlagEnvironmentVariableAndYamlKey() throws IOException {
    Pattern row =
        Pattern.compile(
            "^\\| `(--[a-z-]+)[^`]*` \\| `([A-Z_]+)` \\| `([a-z-]+)` \\|", Pattern.MULTILINE);
    Matcher m = row.matcher(Files.readString(DOC));
    List<String> documented = new ArrayList<>();
    while (m.find()) {
      documented.add(m.group(1) + " " + m.group(2) + " " + m.group(3));
    }

    assertThat(documented)
        .containsExactlyInAnyOrderElementsOf(
            Options.ALL.stream().map(o -> o.flag() + " " + o.env() + " " + o.name()).toList());
  }

  @Test
  void theYamlExampleUsesOnlyKeysTheGatewayReads() throws IOException {
    Matcher m =
        Pattern.compile("^    ([a-z-]+):", Pattern.MULTILINE).matcher(Files.readString(DOC));
    while (m.find()) {
      String key = m.group(1);
      assertThat(key.equals("pattern") || RouteOptions.named(key) != null)
          .as("route key '%s' in an example of %s", key, DOC)
          .isTrue();
    }
  }
}
