package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.once.http.NewKeyLimit;
import dev.once.store.redis.RedisStore;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/spring-boot.md documents exactly the properties the starter binds, with the defaults in
 * force: every property in the built configuration metadata has a row, every row names a property
 * that exists, and its default is the metadata's. (The route options' rows are checked word for
 * word by {@link RouteOptionsDocTest}.) The metadata's defaults that the stores own are checked
 * against the stores.
 */
class PropertiesDocTest {

  private static final Path DOC = Path.of("../docs/spring-boot.md");
  private static final String ROUTE_OPTIONS_BEGIN = "<!-- route-options:begin -->";
  private static final String ROUTE_OPTIONS_END = "<!-- route-options:end -->";
  private static final Pattern ROW =
      Pattern.compile("^\\| `(once\\.[a-z.\\[\\]-]+)` \\| ([^|]*) \\|", Pattern.MULTILINE);

  @Test
  void everyBoundPropertyHasARowAndEveryRowABoundProperty() throws Exception {
    Set<String> bound = new TreeSet<>();
    for (String name : metadata().keySet()) {
      bound.add(name.equals("once.routes") ? "once.routes[n].pattern" : name);
    }
    Set<String> documented = new TreeSet<>();
    Matcher row = ROW.matcher(propertiesSection());
    while (row.find()) {
      documented.add(row.group(1));
    }

    assertThat(documented).isEqualTo(bound);
  }

  /**
   * A row's default reads as the metadata's, in backticks (a list's items joined by ", "); a
   * property without a default in the metadata is described in words, never as a value.
   */
  @Test
  void everyRowShowsTheDefaultOfTheMetadata() throws Exception {
    Map<String, JsonNode> metadata = metadata();
    String section = propertiesSection();
    // The route options' rows are rendered from RouteOptions (RouteOptionsDocTest).
    section =
        section.substring(0, section.indexOf(ROUTE_OPTIONS_BEGIN))
            + section.substring(section.indexOf(ROUTE_OPTIONS_END));
    List<String> differ = new ArrayList<>();
    Matcher row = ROW.matcher(section);
    while (row.find()) {
      String name = row.group(1);
      String shown = row.group(2).strip();
      JsonNode property = metadata.get(name);
      if (property == null) {
        continue; // once.routes[n].pattern: no default, the names test covers it
      }
      JsonNode value = property.get("defaultValue");
      boolean matches =
          value == null || value.isNull()
              ? !shown.contains("`")
              : shown.equals("`" + text(value) + "`");
      if (!matches) {
        differ.add(
            name + ": docs show " + shown + ", metadata says " + (value == null ? "none" : value));
      }
    }

    assertThat(differ).as("rows of %s whose default is not the metadata's", DOC).isEmpty();
  }

  /**
   * The properties left unset fall back to the stores' and the core's own defaults; the metadata
   * (additional-spring-configuration-metadata.json) shows those, so they are checked here.
   */
  @Test
  void theDefaultsTheMetadataTakesFromTheStoresAreTheStores() throws Exception {
    Map<String, JsonNode> metadata = metadata();
    Class<?> jdbcBuilder = Class.forName("dev.once.store.jdbc.JdbcStoreBuilder");

    assertThat(defaultOf(metadata, "once.store.table-name"))
        .isEqualTo(constant(jdbcBuilder, "DEFAULT_TABLE"));
    assertThat(defaultOf(metadata, "once.store.query-timeout"))
        .isEqualTo(seconds((Duration) constant(jdbcBuilder, "DEFAULT_QUERY_TIMEOUT")));
    assertThat(defaultOf(metadata, "once.store.redis.key-prefix"))
        .isEqualTo(RedisStore.DEFAULT_KEY_PREFIX);
    assertThat(defaultOf(metadata, "once.store.redis.command-timeout"))
        .isEqualTo(seconds(RedisStore.DEFAULT_COMMAND_TIMEOUT));
    assertThat(defaultOf(metadata, "once.store.redis.batches-at-once"))
        .isEqualTo(String.valueOf(RedisStore.DEFAULT_BATCHES_AT_ONCE));
    assertThat(NewKeyLimit.perSecond(1).build().toString())
        .contains("maxTenants " + defaultOf(metadata, "once.new-keys.max-tenants") + "]");
    assertThat(new OnceProperties().getFilter().getUrlPatterns())
        .containsExactly(
            metadata.get("once.filter.url-patterns").get("defaultValue").get(0).asText());
  }

  /** The built metadata's properties, by name. */
  private static Map<String, JsonNode> metadata() throws Exception {
    Map<String, JsonNode> byName = new TreeMap<>();
    try (InputStream in =
        PropertiesDocTest.class.getResourceAsStream(
            "/META-INF/spring-configuration-metadata.json")) {
      for (JsonNode p : new ObjectMapper().readTree(in).get("properties")) {
        // management.endpoint.once.*: Boot's own settings of the endpoint, described in its section
        if (p.get("name").asText().startsWith("once.")) {
          byName.put(p.get("name").asText(), p);
        }
      }
    }
    return byName;
  }

  private static String defaultOf(Map<String, JsonNode> metadata, String name) {
    JsonNode value = metadata.get(name).get("defaultValue");
    assertThat(value).as("the metadata's default of %s", name).isNotNull();
    return value.asText();
  }

  private static Object constant(Class<?> type, String name) throws ReflectiveOperationException {
    // Package-private in once-store-jdbc: read where it is declared rather than repeat it here.
    Field field = type.getDeclaredField(name);
    field.setAccessible(true);
    return field.get(null);
  }

  /**
   * A whole number of seconds as the metadata writes it ("5s"); plain Java rather than Spring's
   * DurationStyle, so the test reads the same on both Boot lines.
   */
  private static String seconds(Duration d) {
    assertThat(d.toMillis() % 1000).as("%s is whole seconds", d).isZero();
    return d.toSeconds() + "s";
  }

  private static String text(JsonNode value) {
    if (value.isArray()) {
      List<String> items = new ArrayList<>();
      value.forEach(v -> items.add(v.asText()));
      return String.join(", ", items);
    }
    return value.asText();
  }

  /** The "## Properties" section: other sections (metrics) have rows that look alike. */
  private static String propertiesSection() throws Exception {
    String doc = Files.readString(DOC);
    int start = doc.indexOf("\n## Properties\n");
    assertThat(start).as("docs/spring-boot.md has a '## Properties' section").isNotNegative();
    int end = doc.indexOf("\n## ", start + 1);
    return doc.substring(start, end < 0 ? doc.length() : end);
  }
}
