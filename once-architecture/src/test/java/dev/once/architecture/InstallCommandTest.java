package dev.once.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The first command of docs/getting-started.md installs what a library user may depend on, and only
 * that: every module the BOM publishes (and the BOM itself), but for the runnable programs a user
 * starts rather than depends on. A module added to the BOM fails this test until the command names
 * it too.
 */
class InstallCommandTest {

  private static final Path ROOT = Path.of("..");

  /** Modules in the BOM that are programs, not libraries: why each is left out of the command. */
  private static final Map<String, String> PROGRAMS =
      Map.of(
          "once-gateway", "a standalone proxy, built with its own command (docs/gateway.md)",
          "once-chaos", "the crash harness of the gateway, run from this repository");

  private static final Pattern BOM_ARTIFACT =
      Pattern.compile("<artifactId>(once-[a-z0-9-]+)</artifactId>");
  private static final Pattern FIRST_COMMAND =
      Pattern.compile("```bash\\n(?:#[^\\n]*\\n)*(mvn [^\\n]+)\\n");
  private static final Pattern MODULE_LIST = Pattern.compile(" -pl ([a-z0-9,-]+) -am(?: |$)");

  @Test
  void theFirstInstallCommandBuildsEveryLibraryTheBomPublishesAndNothingElse() throws IOException {
    String command = firstCommand();
    assertThat(command).startsWith("mvn -B install -DskipTests -pl ").endsWith(" -am");
    Matcher list = MODULE_LIST.matcher(command);
    assertThat(list.find()).as(command).isTrue();
    Set<String> named = new TreeSet<>(Arrays.asList(list.group(1).split(",")));

    assertThat(named).isEqualTo(libraries());
    for (String module : named) {
      assertThat(ROOT.resolve(module).resolve("pom.xml")).as(module).isRegularFile();
    }
  }

  private static String firstCommand() throws IOException {
    Matcher m = FIRST_COMMAND.matcher(Files.readString(ROOT.resolve("docs/getting-started.md")));
    assertThat(m.find()).as("a ```bash block whose first command is mvn").isTrue();
    return m.group(1).strip();
  }

  /** The BOM, whose artifacts are the published modules, and the BOM itself, less the programs. */
  private static Set<String> libraries() throws IOException {
    Set<String> modules = new TreeSet<>();
    Matcher m = BOM_ARTIFACT.matcher(Files.readString(ROOT.resolve("once-bom/pom.xml")));
    while (m.find()) {
      modules.add(m.group(1));
    }
    assertThat(modules).contains("once-bom").containsAll(PROGRAMS.keySet());
    modules.removeAll(PROGRAMS.keySet());
    return modules;
  }
}
