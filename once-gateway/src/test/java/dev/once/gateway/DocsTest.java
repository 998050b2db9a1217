package dev.once.gateway;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.FakeUnavailableStore;
import dev.once.http.RouteOptions;
import dev.once.http.kit.OptionDocs;
import java.io.IOException;
import java.net.http.HttpResponse;
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
 * docs/gateway.md lists exactly the options the code declares, under the names the code reads and
 * with the defaults it shows; the {@code /health} bodies and the meters it lists are what a running
 * gateway serves.
 */
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

  /**
   * The JVM flags the gateway is run with are written in three places that cannot import each
   * other: the commands of "Running it", the image's entry point and the benchmark scripts' {@code
   * jvm_flags}. The docs are their home; the other two must say the same.
   */
  @Test
  void theImageAndTheBenchmarksRunTheJvmWithTheFlagsTheDocsGive() throws IOException {
    Matcher run =
        Pattern.compile("^java ((?:-XX:\\S+ )+)-jar once-gateway.jar", Pattern.MULTILINE)
            .matcher(Files.readString(DOC));
    assertThat(run.find()).as("a command in Running it of %s", DOC).isTrue();
    List<String> flags = List.of(run.group(1).trim().split(" "));
    assertThat(flags).contains("-XX:+UseParallelGC", "-XX:+ExitOnOutOfMemoryError");

    String image = Files.readString(Path.of("../deploy/Dockerfile"));
    Matcher entry = Pattern.compile("^ENTRYPOINT \\[(.*)\\]$", Pattern.MULTILINE).matcher(image);
    assertThat(entry.find()).as("the image's ENTRYPOINT").isTrue();
    for (String flag : flags) {
      assertThat(entry.group(1)).as("the image's ENTRYPOINT").contains("\"" + flag + "\"");
    }

    String scripts = Files.readString(Path.of("../once-bench/gateway/common.sh"));
    Matcher bench =
        Pattern.compile("^  echo \"(.*)\"$", Pattern.MULTILINE)
            .matcher(scripts.substring(scripts.indexOf("jvm_flags()")));
    assertThat(bench.find()).as("jvm_flags in common.sh").isTrue();
    assertThat(List.of(bench.group(1).replace("${1:-ParallelGC}", "ParallelGC").split(" ")))
        .as("jvm_flags in common.sh")
        .containsAll(flags);
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

  @Test
  void everyOptionsRowShowsTheDefaultThatHelpShows() throws IOException {
    Pattern row =
        Pattern.compile(
            "^\\| `--([a-z-]+)[^`]*` \\| `[A-Z_]+` \\| `[a-z-]+` \\| ([^|]*) \\|",
            Pattern.MULTILINE);
    Matcher m = row.matcher(Files.readString(DOC));
    Map<String, String> shown = new TreeMap<>();
    while (m.find()) {
      shown.put(m.group(1), plain(m.group(2)));
    }
    Map<String, String> declared = new TreeMap<>();
    Options.ALL.forEach(o -> declared.put(o.name(), plain(o.defaultValue())));

    // The docs mark values as code and explanations in parentheses; --help shows plain text.
    assertThat(shown).isEqualTo(declared);
  }

  private static String plain(String text) {
    return text.replaceAll("[`()]", "").strip();
  }

  @Test
  void theHealthBodiesAreTheOnesTheManagementTableShows() throws Exception {
    Matcher m =
        Pattern.compile(
                "^\\| `GET /health` \\| 200 `([^`]+)`[^|]*; 503 `([^`]+)`", Pattern.MULTILINE)
            .matcher(Files.readString(DOC));
    assertThat(m.find())
        .as("%s's management table shows both bodies of /health: 200 `{...}` ...; 503 `{...}`", DOC)
        .isTrue();

    try (TestGateway up = TestGateway.start()) {
      HttpResponse<String> health = up.management().get("/health");
      assertThat(health.statusCode()).isEqualTo(200);
      assertThat(health.body()).isEqualTo(m.group(1));
    }
    try (TestGateway down =
        TestGateway.start(new OpenStore(new FakeUnavailableStore(), () -> {}))) {
      HttpResponse<String> health = down.management().get("/health");
      assertThat(health.statusCode()).isEqualTo(503);
      assertThat(health.body()).isEqualTo(m.group(2));
    }
  }

  /**
   * The Logs section states the access lines' batching as {@link AccessLines} has it: how often
   * they are written, how much waiting makes them go sooner, and how much may wait at most.
   */
  @Test
  void theLogsSectionGivesTheAccessLinesFiguresOfTheWriter() throws IOException {
    String doc = Files.readString(DOC);
    // One line of prose, however the paragraph is wrapped.
    String logs = doc.substring(doc.indexOf("\n## Logs")).replaceAll("\\s+", " ");
    assertThat(logs)
        .contains("every " + AccessLines.FLUSH_EVERY.toMillis() + " ms")
        .contains("once " + AccessLines.FLUSH_CHARS / 1024 + " KiB wait")
        .contains("at most " + (AccessLines.MOST_PENDING_CHARS >> 20) + " MiB of them waits")
        .contains("the last " + AccessLines.FLUSH_EVERY.toMillis() + " ms of them");
  }

  /**
   * Every {@code once_*} and {@code http_server_*} meter family on {@code /metrics} has a row with
   * its tag keys, and every such row a family: read from a running gateway after one request.
   */
  @Test
  void theMetricsTableListsEveryIdempotencyAndRequestMeterWithItsTags() throws Exception {
    Map<String, Set<String>> served = new TreeMap<>();
    // With the access log on, which brings its own meter.
    try (TestGateway gw = TestGateway.start("--access-log", "true")) {
      gw.client.postJson("/payments/docs", "docs-metrics-1", "{}");
      // The request log times an exchange once it has completed, which may be just after the
      // client has its answer: wait (bounded) until the request's timer is there.
      String[] scraped = new String[1];
      dev.once.tck.Eventually.assertThat(
          "the request reached http_server_requests_seconds",
          java.time.Duration.ofSeconds(10),
          () -> {
            try {
              scraped[0] = gw.management().get("/metrics").body();
            } catch (java.io.IOException e) {
              throw new java.io.UncheckedIOException(e);
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new IllegalStateException(e);
            }
            return scraped[0].contains("# TYPE http_server_requests_seconds ");
          });
      String text = scraped[0];
      Matcher type =
          Pattern.compile("^# TYPE ((?:once|http_server)_[a-z_]+) ([a-z]+)$", Pattern.MULTILINE)
              .matcher(text);
      while (type.find()) {
        String family =
            type.group(2).equals("counter") && !type.group(1).endsWith("_total")
                ? type.group(1) + "_total"
                : type.group(1);
        served.put(family, labels(text, family));
      }
    }
    // A timer's maximum is a gauge of its own, named after the timer: its row is the timer's.
    served
        .keySet()
        .removeIf(f -> f.endsWith("_max") && served.containsKey(f.replaceAll("_max$", "")));

    assertThat(documentedMeters()).isEqualTo(served);
  }

  /** The label keys of a family's samples, without the histogram's bucket bound. */
  private static Set<String> labels(String metrics, String family) {
    Set<String> keys = new TreeSet<>();
    Matcher sample =
        Pattern.compile(
                "^" + Pattern.quote(family) + "(?:_count|_sum|_bucket)?\\{([^}]*)\\}",
                Pattern.MULTILINE)
            .matcher(metrics);
    while (sample.find()) {
      Matcher key = Pattern.compile("([a-z_]+)=\"").matcher(sample.group(1));
      while (key.find()) {
        keys.add(key.group(1));
      }
    }
    keys.remove("le");
    return keys;
  }

  /**
   * The rows of the "## Metrics" section naming {@code once_*} or {@code http_server_*} meters,
   * each with the tag keys its tags cell names before any explanation (after " — ") and outside
   * parentheses (their values).
   */
  private static Map<String, Set<String>> documentedMeters() throws IOException {
    String doc = Files.readString(DOC);
    int start = doc.indexOf("\n## Metrics\n");
    assertThat(start).as("%s has a '## Metrics' section", DOC).isNotNegative();
    int end = doc.indexOf("\n## ", start + 1);
    Matcher row =
        Pattern.compile("^\\| (`[^|]*`) \\| [^|]* \\| ([^|]*) \\|", Pattern.MULTILINE)
            .matcher(doc.substring(start, end < 0 ? doc.length() : end));
    Map<String, Set<String>> meters = new TreeMap<>();
    Pattern code = Pattern.compile("`([^`]+)`");
    while (row.find()) {
      String tagsCell = row.group(2).split(" — ", 2)[0].replaceAll("\\([^)]*\\)", "");
      Set<String> tags = new TreeSet<>();
      Matcher tag = code.matcher(tagsCell);
      while (tag.find()) {
        tags.add(tag.group(1));
      }
      Matcher name = code.matcher(row.group(1));
      while (name.find()) {
        if (name.group(1).matches("(once|http_server)_[a-z_]+")) {
          meters.put(name.group(1), tags);
        }
      }
    }
    return meters;
  }
}
