package dev.once.http.kit;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.RouteOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Collectors;

/**
 * The route-option tables in {@code docs/} are rendered from {@link RouteOptions}: each front end's
 * docs test asserts that the section between the {@code route-options} markers reads exactly so,
 * and a failure prints the text to paste.
 */
public final class OptionDocs {

  private static final String BEGIN = "<!-- route-options:begin -->\n";
  private static final String END = "<!-- route-options:end -->";

  private OptionDocs() {}

  /**
   * Asserts the marked section of {@code doc} is a table headed {@code header} (its first column's
   * title), then {@code extraRows} as given, then one row per option named {@code prefix + name}.
   */
  public static void assertTable(Path doc, String header, String prefix, String extraRows)
      throws IOException {
    String text = Files.readString(doc);
    int begin = text.indexOf(BEGIN);
    int end = text.indexOf(END);
    assertThat(begin).as("%s has the line %s", doc, BEGIN.strip()).isNotNegative();
    assertThat(end).as("%s has the line %s after the begin marker", doc, END).isGreaterThan(begin);

    String expected =
        "| "
            + header
            + " | default | meaning |\n|---|---|---|\n"
            + extraRows
            + RouteOptions.all().stream()
                .map(
                    o ->
                        "| `"
                            + prefix
                            + o.name()
                            + "` | `"
                            + o.defaultValue()
                            + "` | "
                            + o.description()
                            + " |\n")
                .collect(Collectors.joining());
    assertThat(text.substring(begin + BEGIN.length(), end))
        .as("the route-options section of %s, which should read:%n%s", doc, expected)
        .isEqualTo(expected);
  }
}
