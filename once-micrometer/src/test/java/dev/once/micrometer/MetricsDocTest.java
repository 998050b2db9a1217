package dev.once.micrometer;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tag;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
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
 * The meter table of docs/spring-boot.md is what {@link OnceMetrics} registers: every meter, its
 * type, its tag keys and, where the table lists them, every value of a tag. The expectations come
 * from a registry the listener filled, never from a second list.
 */
class MetricsDocTest {

  private static final Path DOC = Path.of("../docs/spring-boot.md");
  private static final Pattern ROW =
      Pattern.compile("^\\| `(once\\.[a-z.]+)` \\| ([a-z]+) \\|([^|]*)\\|", Pattern.MULTILINE);
  private static final Pattern CODE = Pattern.compile("`([^`]+)`");

  /** One meter name as a row shows it or the registry holds it. */
  record Described(String type, Map<String, Set<String>> tags) {}

  @Test
  void theMetricsTableListsEveryMeterWithItsTypeAndTags() throws IOException {
    SimpleMeterRegistry registry = new SimpleMeterRegistry();
    OnceMetrics.of(registry);
    Map<String, Described> registered = new TreeMap<>();
    for (Meter meter : registry.getMeters()) {
      Described d =
          registered.computeIfAbsent(
              meter.getId().getName(), n -> new Described(type(meter), new TreeMap<>()));
      for (Tag tag : meter.getId().getTags()) {
        d.tags().computeIfAbsent(tag.getKey(), k -> new TreeSet<>()).add(tag.getValue());
      }
    }

    Map<String, Described> documented = documented();

    assertThat(documented.keySet())
        .as("the meters in the table of %s", DOC)
        .isEqualTo(registered.keySet());
    List<String> differ = new ArrayList<>();
    documented.forEach(
        (name, doc) -> {
          Described actual = registered.get(name);
          if (!doc.type().equals(actual.type())
              || !doc.tags().keySet().equals(actual.tags().keySet())) {
            differ.add(name + ": docs " + doc + ", registered " + actual);
            return;
          }
          doc.tags()
              .forEach(
                  (key, values) -> {
                    // A tag whose values the table does not list shows only its key.
                    if (!values.isEmpty() && !values.equals(actual.tags().get(key))) {
                      differ.add(
                          name + " tag " + key + ": docs " + values + ", registered " + actual);
                    }
                  });
        });
    assertThat(differ).isEmpty();
  }

  private static String type(Meter meter) {
    if (meter instanceof Counter) {
      return "counter";
    }
    if (meter instanceof Timer) {
      return "timer";
    }
    return meter.getId().getType().name().toLowerCase(java.util.Locale.ROOT);
  }

  /** The rows of the "## Metrics" section; tags as {@code `key` (`v1`, `v2`), `key2`}. */
  private static Map<String, Described> documented() throws IOException {
    String doc = Files.readString(DOC);
    int start = doc.indexOf("\n## Metrics\n");
    assertThat(start).as("%s has a '## Metrics' section", DOC).isNotNegative();
    int end = doc.indexOf("\n## ", start + 1);
    Matcher row = ROW.matcher(doc.substring(start, end < 0 ? doc.length() : end));
    Map<String, Described> rows = new TreeMap<>();
    while (row.find()) {
      rows.put(row.group(1), new Described(row.group(2), tags(row.group(3))));
    }
    return rows;
  }

  private static Map<String, Set<String>> tags(String cell) {
    Map<String, Set<String>> tags = new TreeMap<>();
    int depth = 0;
    StringBuilder part = new StringBuilder();
    List<String> parts = new ArrayList<>();
    for (char c : cell.toCharArray()) {
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      if (c == ',' && depth == 0) {
        parts.add(part.toString());
        part.setLength(0);
      } else {
        part.append(c);
      }
    }
    parts.add(part.toString());
    for (String p : parts) {
      Matcher code = CODE.matcher(p);
      if (!code.find()) {
        continue; // an empty cell: no tags
      }
      Set<String> values = new TreeSet<>();
      tags.put(code.group(1), values);
      while (code.find()) {
        values.add(code.group(1));
      }
    }
    return tags;
  }
}
