package dev.once.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaMember;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * docs/architecture.md is a map of the code, and a map that points at renamed or deleted code
 * misleads the very reader it is for. So every name it cites in backticks must still exist: each
 * fully qualified type or package ({@code dev.once.Once}, {@code dev.once.http.Decision.Proceed}),
 * each member cited as {@code Type#member}, and each file cited by its path from the repository's
 * root. Types are looked up among the product modules' classes as ArchUnit imported them ({@link
 * ProductClasses}), so nothing is loaded and the modules' own dependencies need not be on the class
 * path; the page may therefore cite only the modules once-architecture's pom lists.
 */
class ArchitectureDocTest {

  private static final Path ROOT = Path.of("..");
  private static final Path PAGE = ROOT.resolve("docs/architecture.md");

  /** A code span naming a Once type or package, and optionally a member of the type. */
  private static final Pattern NAME =
      Pattern.compile("`(dev\\.once(?:\\.[A-Za-z_$][\\w$]*)+)(?:#([\\w$]+))?`");

  /** A code span naming a file by its path from the repository's root. */
  private static final Pattern FILE =
      Pattern.compile("`([\\w.-]+(?:/[\\w.$-]+)+\\.(?:java|lua|sql|md|xml|yml|yaml|properties))`");

  @Test
  void everyTypeMemberAndPackageThePageCitesExists() throws IOException {
    JavaClasses classes = ProductClasses.get().classes();
    List<String> cited = new ArrayList<>();
    List<String> missing = new ArrayList<>();
    Matcher m = NAME.matcher(Files.readString(PAGE));
    while (m.find()) {
      String name = m.group(1);
      String member = m.group(2);
      cited.add(m.group());
      Optional<JavaClass> type = type(classes, name);
      if (type.isEmpty()) {
        if (member != null || !classes.containPackage(name)) {
          missing.add(name + ": no such type" + (member == null ? " or package" : ""));
        }
      } else if (member != null && !hasMember(type.get(), member)) {
        missing.add(name + "#" + member + ": no such member");
      }
    }
    // A pattern that matched nothing would check nothing: the page cites well over this many.
    assertThat(cited).hasSizeGreaterThan(100);
    assertThat(missing)
        .as("names docs/architecture.md cites that no longer exist: correct the page")
        .isEmpty();
  }

  @Test
  void everyFileThePageCitesExists() throws IOException {
    List<String> cited = new ArrayList<>();
    Matcher m = FILE.matcher(Files.readString(PAGE));
    while (m.find()) {
      cited.add(m.group(1));
    }
    assertThat(cited).hasSizeGreaterThan(3);
    assertThat(cited)
        .as("files docs/architecture.md cites by path")
        .allSatisfy(path -> assertThat(ROOT.resolve(path)).as(path).isRegularFile());
  }

  /**
   * The type a dotted name means: a top-level type, or a nested one written with dots as in source
   * ({@code dev.once.http.Decision.Proceed} is the class {@code dev.once.http.Decision$Proceed}).
   */
  private static Optional<JavaClass> type(JavaClasses classes, String dotted) {
    String candidate = dotted;
    while (true) {
      if (classes.contain(candidate)) {
        return Optional.of(classes.get(candidate));
      }
      int dot = candidate.lastIndexOf('.');
      if (dot < 0) {
        return Optional.empty();
      }
      candidate = candidate.substring(0, dot) + '$' + candidate.substring(dot + 1);
    }
  }

  private static boolean hasMember(JavaClass type, String name) {
    return type.getAllMembers().stream().map(JavaMember::getName).anyMatch(name::equals);
  }
}
