package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/spring-boot.md documents exactly the properties the starter binds: every property in the
 * built configuration metadata has a row, and every row names a property that exists. (The route
 * options' rows are checked word for word by {@link RouteOptionsDocTest}.)
 */
class PropertiesDocTest {

  @Test
  void everyBoundPropertyHasARowAndEveryRowABoundProperty() throws Exception {
    Set<String> bound = new TreeSet<>();
    try (InputStream in =
        getClass().getResourceAsStream("/META-INF/spring-configuration-metadata.json")) {
      for (JsonNode p : new ObjectMapper().readTree(in).get("properties")) {
        String name = p.get("name").asText();
        bound.add(name.equals("once.routes") ? "once.routes[n].pattern" : name);
      }
    }
    Set<String> documented = new TreeSet<>();
    Matcher row =
        Pattern.compile("^\\| `(once\\.[a-z.\\[\\]-]+)` \\|", Pattern.MULTILINE)
            .matcher(propertiesSection(Files.readString(Path.of("../docs/spring-boot.md"))));
    while (row.find()) {
      documented.add(row.group(1));
    }

    assertThat(documented).isEqualTo(bound);
  }

  /** The "## Properties" section: other sections (metrics) have rows that look alike. */
  private static String propertiesSection(String doc) {
    int start = doc.indexOf("\n## Properties\n");
    assertThat(start).as("docs/spring-boot.md has a '## Properties' section").isNotNegative();
    int end = doc.indexOf("\n## ", start + 1);
    return doc.substring(start, end < 0 ? doc.length() : end);
  }
}
