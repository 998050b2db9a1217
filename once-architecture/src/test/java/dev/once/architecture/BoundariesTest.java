package dev.once.architecture;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.FileSystem;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The module boundaries, declared once here and checked against the compiled classes, so that
 * {@code mvn verify} fails when a module reaches into another's internals, an internal type appears
 * in a public signature, a new package is neither API nor internal, or a module starts to depend on
 * one it should not (the client on the engine, say).
 *
 * <p>Once has no {@code module-info} yet (its users are on the classpath, and several integrations
 * rely on automatic-module dependencies); these rules are what {@code exports} would say.
 */
class BoundariesTest {

  /** The one package of internals that every Once module may use and no user should. */
  static final String SHARED_INTERNALS = "dev.once.internal";

  /**
   * Each product module: its API packages (what users may import), its internal packages, and the
   * Once modules it may use.
   */
  record Module(Set<String> api, Set<String> internal, Set<String> uses) {
    static Module of(String api, String internal, String... uses) {
      return new Module(split(api), split(internal), Set.of(uses));
    }

    private static Set<String> split(String packages) {
      return packages.isEmpty() ? Set.of() : Set.of(packages.split(" "));
    }
  }

  static final Map<String, Module> MODULES =
      new TreeMap<>(
          Map.ofEntries(
              Map.entry("once-protocol", Module.of("dev.once.protocol", SHARED_INTERNALS)),
              Map.entry(
                  "once-core",
                  Module.of("dev.once dev.once.fingerprint dev.once.store", "", "once-protocol")),
              Map.entry("once-tck", Module.of("dev.once.tck", "", "once-core", "once-protocol")),
              Map.entry(
                  "once-store-jdbc",
                  Module.of(
                      "dev.once.store.jdbc dev.once.store.jdbc.support",
                      "",
                      "once-core",
                      "once-protocol")),
              Map.entry(
                  "once-store-redis",
                  Module.of("dev.once.store.redis", "", "once-core", "once-protocol")),
              Map.entry(
                  "once-store-dynamodb",
                  Module.of("dev.once.store.dynamodb", "", "once-core", "once-protocol")),
              Map.entry("once-http", Module.of("dev.once.http", "", "once-core", "once-protocol")),
              Map.entry(
                  "once-messaging",
                  Module.of("dev.once.messaging", "", "once-core", "once-protocol")),
              Map.entry(
                  "once-rabbitmq",
                  Module.of(
                      "dev.once.rabbitmq", "", "once-messaging", "once-core", "once-protocol")),
              Map.entry(
                  "once-sqs",
                  Module.of("dev.once.sqs", "", "once-messaging", "once-core", "once-protocol")),
              Map.entry(
                  "once-kafka",
                  Module.of(
                      "dev.once.kafka",
                      "",
                      "once-messaging",
                      "once-outbox",
                      "once-core",
                      "once-protocol")),
              Map.entry(
                  "once-servlet",
                  Module.of("dev.once.servlet", "", "once-http", "once-core", "once-protocol")),
              Map.entry(
                  "once-webflux",
                  Module.of("dev.once.webflux", "", "once-http", "once-core", "once-protocol")),
              // The outbox shares the JDBC stores' table names and schema files through their
              // support API.
              Map.entry(
                  "once-outbox",
                  Module.of(
                      "dev.once.outbox", "", "once-store-jdbc", "once-core", "once-protocol")),
              Map.entry(
                  "once-micrometer",
                  Module.of("dev.once.micrometer", "", "once-core", "once-protocol")),
              // A client speaks the wire protocol; it does not need the engine.
              Map.entry("once-client", Module.of("dev.once.client", "", "once-protocol")),
              Map.entry(
                  "once-gateway",
                  Module.of(
                      "dev.once.gateway",
                      "",
                      "once-http",
                      "once-micrometer",
                      "once-store-jdbc",
                      "once-store-redis",
                      "once-core",
                      "once-protocol")),
              Map.entry(
                  "once-spring-boot-starter",
                  Module.of(
                      "dev.once.spring",
                      "",
                      "once-servlet",
                      "once-webflux",
                      "once-http",
                      "once-micrometer",
                      "once-store-jdbc",
                      "once-store-redis",
                      "once-core",
                      "once-protocol"))));

  /** A module's class files, by module name (the artifactId). */
  static final Map<String, List<ClassFile>> CLASSES = new TreeMap<>();

  /** Which module each package belongs to. */
  static final Map<String, String> OWNER = new TreeMap<>();

  @BeforeAll
  static void readClassFiles() throws IOException {
    for (String entry : System.getProperty("java.class.path").split(java.io.File.pathSeparator)) {
      Path path = Path.of(entry);
      String module = moduleOf(path);
      if (module != null) {
        CLASSES.put(module, read(path));
      }
    }
    CLASSES.forEach((module, classes) -> classes.forEach(c -> OWNER.put(c.packageName(), module)));
  }

  @Test
  void everyProductModuleIsDeclaredAndFound() {
    assertThat(CLASSES.keySet())
        .as("modules on the test class path; declare a new one in MODULES and the pom")
        .isEqualTo(MODULES.keySet());
  }

  @Test
  void everyPackageIsDeclaredApiOrInternal() {
    List<String> undeclared = new ArrayList<>();
    CLASSES.forEach(
        (module, classes) ->
            classes.stream()
                .map(ClassFile::packageName)
                .distinct()
                .filter(
                    p ->
                        !MODULES.get(module).api().contains(p)
                            && !MODULES.get(module).internal().contains(p))
                .forEach(p -> undeclared.add(module + ": " + p)));
    assertThat(undeclared)
        .as("packages that are neither API nor internal: declare each in MODULES")
        .isEmpty();
  }

  @Test
  void modulesUseOnlyTheModulesTheyDeclare() {
    List<String> violations = new ArrayList<>();
    forEachReference(
        (module, from, to, toModule) -> {
          if (!toModule.equals(module) && !MODULES.get(module).uses().contains(toModule)) {
            violations.add(module + " uses " + toModule + ": " + from.name() + " -> " + to);
          }
        });
    assertThat(violations).isEmpty();
  }

  @Test
  void noModuleUsesAnotherModulesInternals() {
    List<String> violations = new ArrayList<>();
    forEachReference(
        (module, from, to, toModule) -> {
          String pkg = packageOf(to);
          if (!toModule.equals(module)
              && MODULES.get(toModule).internal().contains(pkg)
              && !pkg.equals(SHARED_INTERNALS)) {
            violations.add(from.name() + " -> " + to);
          }
        });
    assertThat(violations).isEmpty();
  }

  @Test
  void internalTypesNeverAppearInThePublicApi() {
    List<String> leaks = new ArrayList<>();
    CLASSES.forEach(
        (module, classes) ->
            classes.stream()
                .filter(c -> c.isPublic() && MODULES.get(module).api().contains(c.packageName()))
                .forEach(
                    c ->
                        c.exposed().stream()
                            .filter(BoundariesTest::isInternal)
                            .forEach(t -> leaks.add(c.name() + " exposes " + t))));
    assertThat(leaks).isEmpty();
  }

  @Test
  void theRulesCatchWhatTheyAreFor() {
    // A guard against a scan that silently reads nothing: these references exist on purpose.
    assertThat(CLASSES.get("once-core")).extracting(ClassFile::name).contains("dev/once/Once");
    assertThat(CLASSES.get("once-outbox"))
        .anySatisfy(
            c -> assertThat(c.references()).contains("dev/once/store/jdbc/support/TableName"));
    assertThat(CLASSES.get("once-client"))
        .anySatisfy(c -> assertThat(c.references()).contains("dev/once/internal/KeySyntax"));
  }

  private static boolean isInternal(String className) {
    String pkg = packageOf(className);
    String module = OWNER.get(pkg);
    return module != null && MODULES.get(module).internal().contains(pkg);
  }

  interface ReferenceVisitor {
    void visit(String module, ClassFile from, String to, String toModule);
  }

  private static void forEachReference(ReferenceVisitor visitor) {
    CLASSES.forEach(
        (module, classes) -> {
          for (ClassFile c : classes) {
            for (String to : c.references()) {
              String toModule = to.startsWith("dev/once/") ? OWNER.get(packageOf(to)) : null;
              if (toModule != null) {
                visitor.visit(module, c, to, toModule);
              }
            }
          }
        });
  }

  private static String packageOf(String className) {
    int slash = className.lastIndexOf('/');
    return slash < 0 ? "" : className.substring(0, slash).replace('/', '.');
  }

  /** {@code once-core-0.1.0-SNAPSHOT.jar}, or a jar named without its version (the gateway's). */
  private static final Pattern JAR = Pattern.compile("(once-[a-z-]+?)(-\\d[^/]*)?\\.jar");

  /** The artifactId of a product module's class path entry: its target/classes or its jar. */
  private static String moduleOf(Path entry) {
    Path name = entry.getFileName();
    if (name == null) {
      return null;
    }
    if (Files.isDirectory(entry)
        && name.toString().equals("classes")
        && entry.getParent() != null
        && entry.getParent().getFileName().toString().equals("target")) {
      String module = entry.getParent().getParent().getFileName().toString();
      return MODULES.containsKey(module) ? module : null;
    }
    Matcher m = JAR.matcher(name.toString());
    return m.matches() && MODULES.containsKey(m.group(1)) ? m.group(1) : null;
  }

  private static List<ClassFile> read(Path entry) throws IOException {
    // A reactor build hands over the packaged jar; the gateway's is shaded (it holds its
    // dependencies' classes too), so read the module's own compiled classes beside it instead.
    Path classes = entry.resolveSibling("classes");
    if (!Files.isDirectory(entry)
        && entry.getParent() != null
        && entry.getParent().getFileName().toString().equals("target")
        && Files.isDirectory(classes)) {
      return readTree(classes);
    }
    if (Files.isDirectory(entry)) {
      return readTree(entry);
    }
    try (FileSystem jar = FileSystems.newFileSystem(URI.create("jar:" + entry.toUri()), Map.of())) {
      return readTree(jar.getPath("/"));
    }
  }

  private static List<ClassFile> readTree(Path root) throws IOException {
    try (Stream<Path> files = Files.walk(root)) {
      return files
          .filter(
              p ->
                  p.toString().endsWith(".class")
                      && !p.getFileName().toString().equals("module-info.class")
                      && !p.getFileName().toString().equals("package-info.class"))
          .map(
              p -> {
                try {
                  return ClassFile.parse(Files.readAllBytes(p));
                } catch (IOException e) {
                  throw new UncheckedIOException(p.toString(), e);
                }
              })
          .collect(Collectors.toList());
    }
  }
}
