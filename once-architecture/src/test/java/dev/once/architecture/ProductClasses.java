package dev.once.architecture;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.Location;
import java.io.File;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The product modules' classes, as found on this module's test class path and imported by ArchUnit
 * once for every test that reads them. ArchUnit reads class files and loads none of them, which is
 * why the pom can leave out every dependency of the modules themselves.
 */
final class ProductClasses {

  /** Modules that are on the test class path without being products. */
  private static final Set<String> NOT_PRODUCTS = Set.of("once-architecture");

  /** {@code once-core-0.1.0-SNAPSHOT.jar}, or a jar named without its version (the gateway's). */
  private static final Pattern JAR = Pattern.compile("(once-[a-z0-9-]+?)(-\\d[^/]*)?\\.jar");

  private static final ProductClasses INSTANCE = importFromClassPath();

  /** Where each module's classes were read from, by module name (the artifactId). */
  private final Map<String, URI> roots;

  private final JavaClasses classes;

  /** The module of each imported class, by class name. */
  private final Map<String, String> moduleOfClass;

  private ProductClasses(
      Map<String, URI> roots, JavaClasses classes, Map<String, String> moduleOfClass) {
    this.roots = roots;
    this.classes = classes;
    this.moduleOfClass = moduleOfClass;
  }

  static ProductClasses get() {
    return INSTANCE;
  }

  /** Every product module found on the class path, declared in BoundariesTest or not. */
  Set<String> modules() {
    return roots.keySet();
  }

  JavaClasses classes() {
    return classes;
  }

  Optional<String> moduleOf(JavaClass javaClass) {
    return Optional.ofNullable(moduleOfClass.get(javaClass.getName()));
  }

  /** The classes read from one module's class path entry. */
  DescribedPredicate<JavaClass> in(String module) {
    return DescribedPredicate.describe(
        "belong to " + module, c -> module.equals(moduleOfClass.get(c.getName())));
  }

  /** The classes read from any of these modules. */
  DescribedPredicate<JavaClass> inAnyOf(Collection<String> modules) {
    return DescribedPredicate.describe(
        "belong to any of " + modules, c -> modules.contains(moduleOfClass.get(c.getName())));
  }

  private static ProductClasses importFromClassPath() {
    Map<String, URI> roots = new TreeMap<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      Path path = Path.of(entry).toAbsolutePath();
      String module = moduleOf(path);
      if (module != null) {
        roots.put(module, root(path));
      }
    }
    List<Location> locations = new ArrayList<>();
    roots.values().forEach(root -> locations.add(Location.of(root)));
    JavaClasses classes =
        new ClassFileImporter()
            .withImportOption(
                location ->
                    !location.contains("/module-info") && !location.contains("/package-info"))
            .importLocations(locations);

    Map<String, String> moduleOfClass = new TreeMap<>();
    for (JavaClass c : classes) {
      c.getSource()
          .map(source -> source.getUri().toString())
          .ifPresent(
              uri ->
                  roots.forEach(
                      (module, root) -> {
                        if (uri.startsWith(root.toString())) {
                          moduleOfClass.put(c.getName(), module);
                        }
                      }));
    }
    return new ProductClasses(roots, classes, moduleOfClass);
  }

  /** The artifactId of a product module's class path entry (its target/classes or its jar). */
  private static String moduleOf(Path entry) {
    Path name = entry.getFileName();
    if (name == null) {
      return null;
    }
    String module = null;
    if (Files.isDirectory(entry)
        && name.toString().equals("classes")
        && entry.getParent() != null
        && entry.getParent().getFileName().toString().equals("target")) {
      module = entry.getParent().getParent().getFileName().toString();
    } else {
      Matcher m = JAR.matcher(name.toString());
      if (m.matches()) {
        module = m.group(1);
      }
    }
    return module != null && module.startsWith("once-") && !NOT_PRODUCTS.contains(module)
        ? module
        : null;
  }

  /** Where to read a module's own classes from: its directory, or its jar's root. */
  private static URI root(Path entry) {
    // A reactor build hands over the packaged jar; the gateway's is shaded (it holds its
    // dependencies' classes too), so read the module's own compiled classes beside it instead.
    Path classes = entry.resolveSibling("classes");
    if (!Files.isDirectory(entry)
        && entry.getParent() != null
        && entry.getParent().getFileName().toString().equals("target")
        && Files.isDirectory(classes)) {
      return classes.toUri();
    }
    if (Files.isDirectory(entry)) {
      return entry.toUri();
    }
    return URI.create("jar:" + entry.toUri() + "!/");
  }
}
