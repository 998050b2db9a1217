package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.BooleanNode;
import com.fasterxml.jackson.databind.node.IntNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.databind.node.TextNode;
import dev.once.http.RouteOption;
import dev.once.http.RouteOptions;
import java.io.InputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What IDEs show for {@code once.defaults.*} (the processor's metadata, with {@code
 * additional-spring-configuration-metadata.json} merged in) is once-http's {@link RouteOptions}
 * table: its description and its default, for every option and no other.
 */
class PropertiesMetadataTest {

  private static final String PREFIX = "once.defaults.";
  private static final ObjectMapper JSON = new ObjectMapper();

  /** The built metadata's {@code once.defaults.*} properties, by name. */
  private static Map<String, JsonNode> defaultsMetadata() throws Exception {
    try (InputStream in =
        PropertiesMetadataTest.class.getResourceAsStream(
            "/META-INF/spring-configuration-metadata.json")) {
      Map<String, JsonNode> byName = new TreeMap<>();
      for (JsonNode p : JSON.readTree(in).get("properties")) {
        if (p.get("name").asText().startsWith(PREFIX)) {
          byName.put(p.get("name").asText(), p);
        }
      }
      return byName;
    }
  }

  @Test
  void everyRouteOptionIsDescribedAsTheTableSays() throws Exception {
    Map<String, JsonNode> metadata = defaultsMetadata();
    List<String> differ = new ArrayList<>();
    for (RouteOption option : RouteOptions.all()) {
      JsonNode entry = metadata.get(PREFIX + option.name());
      if (entry == null || !expected(option).equals(asWritten(entry))) {
        differ.add(option.name());
      }
    }
    assertThat(differ)
        .as(
            "once.defaults.* whose metadata is not the RouteOptions table's; the route options' entries of"
                + " additional-spring-configuration-metadata.json should read:%n%s%n(the processor merges that file"
                + " only when it compiles OnceProperties: build with clean)",
            expectedEntries())
        .isEmpty();
  }

  @Test
  void noOtherDefaultsPropertyIsDescribed() throws Exception {
    List<String> expected =
        new ArrayList<>(RouteOptions.all().stream().map(o -> PREFIX + o.name()).toList());
    expected.add(PREFIX + "transactional");

    assertThat(defaultsMetadata().keySet()).containsExactlyInAnyOrderElementsOf(expected);
  }

  /**
   * What the additional file says of a property, without what the processor adds (type, source).
   */
  private static JsonNode asWritten(JsonNode entry) {
    ObjectNode written = JSON.createObjectNode();
    for (String field : List.of("name", "description", "defaultValue")) {
      written.set(field, entry.get(field));
    }
    return written;
  }

  /**
   * The entry an option should have. The default is typed as IDEs expect for the property: a list's
   * items as an array (the table shows an empty one as "none"), a flag or count as such, the rest
   * as the table's text.
   */
  private static JsonNode expected(RouteOption option) {
    String shown = option.defaultValue();
    JsonNode defaultValue =
        switch (option.type()) {
          case LIST -> {
            ArrayNode items = JsonNodeFactory.instance.arrayNode();
            if (!shown.equals("none")) {
              List.of(shown.split(", ")).forEach(items::add);
            }
            yield items;
          }
          case BOOLEAN -> BooleanNode.valueOf(Boolean.parseBoolean(shown));
          case COUNT -> IntNode.valueOf(Integer.parseInt(shown));
          default -> TextNode.valueOf(shown);
        };
    return JSON.createObjectNode()
        .put("name", PREFIX + option.name())
        .put("description", option.description())
        .set("defaultValue", defaultValue);
  }

  /** The entries to paste, one a line as the file has them. */
  private static String expectedEntries() {
    return RouteOptions.all().stream()
        .map(
            o -> {
              JsonNode e = expected(o);
              return "    {\"name\": "
                  + e.get("name")
                  + ", \"description\": "
                  + e.get("description")
                  + ", \"defaultValue\": "
                  + e.get("defaultValue")
                  + "},";
            })
        .collect(Collectors.joining("\n"));
  }
}
