package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Every Java snippet of docs/testing.md is a test that runs: the part of a test class between its
 * {@code // testing.md:begin} and {@code // testing.md:end} lines, and the page shows each of them.
 */
class TestingPageTest {

  private static final Path PAGE = Path.of("../docs/testing.md");
  private static final Path TESTS = Path.of("../once-spring-boot-starter/src/test/java");
  private static final List<String> CLASSES =
      List.of(
          "dev/once/spring/methods/PaymentsTest.java",
          "dev/once/spring/methods/PaymentsWithoutOnceTest.java");

  private static final Pattern JAVA_BLOCK = Pattern.compile("```java\n(.*?)```", Pattern.DOTALL);
  private static final Pattern MARKED =
      Pattern.compile("// testing\\.md:begin\n(.*?)// testing\\.md:end", Pattern.DOTALL);

  @Test
  void thePageShowsExactlyTheTestsThatRun() throws IOException {
    List<String> shown = all(JAVA_BLOCK, Files.readString(PAGE));
    List<String> run = new ArrayList<>();
    for (String path : CLASSES) {
      List<String> marked = all(MARKED, Files.readString(TESTS.resolve(path)));
      assertThat(marked).as(path).hasSize(1);
      run.addAll(marked);
    }

    assertThat(shown).containsExactlyElementsOf(run);
  }

  private static List<String> all(Pattern pattern, String text) {
    List<String> found = new ArrayList<>();
    Matcher m = pattern.matcher(text);
    while (m.find()) {
      found.add(m.group(1).strip());
    }
    return found;
  }
}
