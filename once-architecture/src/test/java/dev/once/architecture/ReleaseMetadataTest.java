package dev.once.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * What a public repository asks of every published pom: once-parent declares it for every module
 * that inherits it, and once-bom, which inherits nothing, repeats it; the two must not drift.
 */
class ReleaseMetadataTest {

  private static final Path ROOT = Path.of("..");

  @Test
  void theBomCarriesTheParentsLicenseDevelopersAndScm() throws IOException {
    String parent = Files.readString(ROOT.resolve("pom.xml"));
    String bom = Files.readString(ROOT.resolve("once-bom/pom.xml"));

    for (String element : new String[] {"url", "licenses", "developers", "scm"}) {
      assertThat(first(element, bom)).as(element).isNotBlank().isEqualTo(first(element, parent));
    }
  }

  /** The text of the first {@code <element>} of the pom, whitespace collapsed. */
  private static String first(String element, String pom) {
    Matcher m =
        Pattern.compile("<" + element + ">(.*?)</" + element + ">", Pattern.DOTALL).matcher(pom);
    assertThat(m.find()).as("<" + element + ">").isTrue();
    return m.group(1).replaceAll("\\s+", " ").strip();
  }
}
