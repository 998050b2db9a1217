package dev.once.architecture;

import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.classes;
import static com.tngtech.archunit.lang.syntax.ArchRuleDefinition.noClasses;
import static com.tngtech.archunit.library.Architectures.layeredArchitecture;
import static org.assertj.core.api.Assertions.assertThat;

import com.tngtech.archunit.base.DescribedPredicate;
import com.tngtech.archunit.core.domain.Dependency;
import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.domain.JavaClasses;
import com.tngtech.archunit.core.domain.JavaCodeUnit;
import com.tngtech.archunit.core.domain.JavaField;
import com.tngtech.archunit.core.domain.JavaMember;
import com.tngtech.archunit.core.domain.JavaModifier;
import com.tngtech.archunit.core.domain.JavaType;
import com.tngtech.archunit.lang.ArchCondition;
import com.tngtech.archunit.lang.ConditionEvents;
import com.tngtech.archunit.lang.SimpleConditionEvent;
import com.tngtech.archunit.lang.conditions.ArchConditions;
import com.tngtech.archunit.library.Architectures.LayeredArchitecture;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * The module boundaries, declared once here and checked by ArchUnit against the compiled classes
 * (as {@link ProductClasses} finds them on the test class path), so that {@code mvn verify} fails
 * when a module reaches into another's internals, an internal type appears in a public signature, a
 * new package is neither API nor internal, or a module starts to depend on one it should not (the
 * client on the engine, say), or a module that must run in any application starts to use Jakarta,
 * Spring, Jetty or Reactor.
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

  /**
   * The modules that must run in any application, whatever framework it is built on, if any: the
   * wire protocol, the engine, its contract kit, every store, the broker-neutral consumer semantics
   * and the client. New store modules are covered by their name.
   */
  static final Set<String> FRAMEWORK_FREE =
      MODULES.keySet().stream()
          .filter(
              m ->
                  m.startsWith("once-store-")
                      || Set.of(
                              "once-protocol",
                              "once-core",
                              "once-tck",
                              "once-messaging",
                              "once-client")
                          .contains(m))
          .collect(Collectors.toCollection(TreeSet::new));

  /** The frameworks FRAMEWORK_FREE modules may not touch, as ArchUnit package patterns. */
  static final String[] FRAMEWORKS = {
    "jakarta..", "org.springframework..", "org.eclipse.jetty..", "reactor.."
  };

  private static final ProductClasses PRODUCT = ProductClasses.get();
  private static final JavaClasses CLASSES = PRODUCT.classes();

  @Test
  void everyProductModuleIsDeclaredAndFound() {
    assertThat(PRODUCT.modules())
        .as("modules on the test class path; declare a new one in MODULES and the pom")
        .isEqualTo(MODULES.keySet());
  }

  @Test
  void everyPackageIsDeclaredApiOrInternal() {
    classes()
        .that(PRODUCT.inAnyOf(MODULES.keySet()))
        .should(resideInAPackageTheirModuleDeclares())
        .because(
            "a package is either API (users may import it) or internal; declare each new one in"
                + " BoundariesTest.MODULES")
        .check(CLASSES);
  }

  @Test
  void modulesUseOnlyTheModulesTheyDeclare() {
    // Each module is a layer of its own; dependencies on anything outside Once's modules (the JDK,
    // the libraries each pom declares) are not this rule's business.
    LayeredArchitecture layers = layeredArchitecture().consideringOnlyDependenciesInLayers();
    for (String module : MODULES.keySet()) {
      layers = layers.layer(module).definedBy(PRODUCT.in(module));
    }
    for (Map.Entry<String, Module> module : MODULES.entrySet()) {
      Set<String> uses = module.getValue().uses();
      layers =
          uses.isEmpty()
              ? layers.whereLayer(module.getKey()).mayNotAccessAnyLayer()
              : layers
                  .whereLayer(module.getKey())
                  .mayOnlyAccessLayers(new TreeSet<>(uses).toArray(String[]::new));
    }
    layers
        .because(
            "a module may use only the Once modules its entry in BoundariesTest.MODULES (and its"
                + " pom) declares")
        .check(CLASSES);
  }

  @Test
  void noModuleUsesAnotherModulesInternals() {
    classes()
        .should(ArchConditions.onlyHaveDependenciesWhere(notIntoAnotherModulesInternals()))
        .because(
            "a module's internal packages are its own; only "
                + SHARED_INTERNALS
                + " is shared by every module")
        .check(CLASSES);
  }

  @Test
  void internalTypesNeverAppearInThePublicApi() {
    classes()
        .that(areVisibleInAnApiPackage())
        .should(exposeNoInternalType())
        .because(
            "a user who sees an internal type in a public signature will use it, and internals"
                + " change in any release")
        .check(CLASSES);
  }

  @Test
  void frameworkFreeModulesUseNoJakartaSpringJettyOrReactor() {
    noClasses()
        .that(PRODUCT.inAnyOf(FRAMEWORK_FREE))
        .should()
        .dependOnClassesThat()
        .resideInAnyPackage(FRAMEWORKS)
        .because(
            "these modules run in any application, with or without Jakarta, Spring, Jetty or"
                + " Reactor; the adapters for those (once-servlet, once-webflux, the starter, the"
                + " gateway) live in modules of their own")
        .check(CLASSES);
  }

  @Test
  void theRulesCatchWhatTheyAreFor() {
    // A guard against an import that silently reads nothing: these classes and references exist
    // on purpose.
    assertThat(PRODUCT.moduleOf(CLASSES.get("dev.once.Once"))).contains("once-core");
    assertThat(dependentModules("dev.once.store.jdbc.support.TableName")).contains("once-outbox");
    assertThat(dependentModules("dev.once.internal.KeySyntax")).contains("once-client");
    assertThat(FRAMEWORK_FREE)
        .contains("once-store-jdbc", "once-store-redis", "once-store-dynamodb", "once-client");
  }

  private static Set<String> dependentModules(String className) {
    return CLASSES.get(className).getDirectDependenciesToSelf().stream()
        .map(d -> PRODUCT.moduleOf(d.getOriginClass()).orElse("?"))
        .collect(Collectors.toSet());
  }

  private static ArchCondition<JavaClass> resideInAPackageTheirModuleDeclares() {
    return new ArchCondition<>("reside in a package their module declares API or internal") {
      @Override
      public void check(JavaClass c, ConditionEvents events) {
        String module = PRODUCT.moduleOf(c).orElseThrow();
        String pkg = c.getPackageName();
        Module declared = MODULES.get(module);
        if (!declared.api().contains(pkg) && !declared.internal().contains(pkg)) {
          events.add(
              SimpleConditionEvent.violated(
                  c,
                  c.getName()
                      + " is in "
                      + pkg
                      + ", which "
                      + module
                      + " declares neither API nor internal"));
        }
      }
    };
  }

  /** A dependency that stays in its module, or enters another only through its API. */
  private static DescribedPredicate<Dependency> notIntoAnotherModulesInternals() {
    return DescribedPredicate.describe(
        "a dependency on another module's classes goes to its API packages or to "
            + SHARED_INTERNALS,
        d -> {
          String from = PRODUCT.moduleOf(d.getOriginClass()).orElse(null);
          String to = PRODUCT.moduleOf(d.getTargetClass()).orElse(null);
          String pkg = d.getTargetClass().getPackageName();
          return to == null
              || to.equals(from)
              || !MODULES.containsKey(to)
              || !MODULES.get(to).internal().contains(pkg)
              || pkg.equals(SHARED_INTERNALS);
        });
  }

  /** Public (or protected nested) classes of API packages: what users compile against. */
  private static DescribedPredicate<JavaClass> areVisibleInAnApiPackage() {
    return DescribedPredicate.describe(
        "are public or protected, in an API package",
        c ->
            isVisible(c.getModifiers())
                && PRODUCT
                    .moduleOf(c)
                    .map(MODULES::get)
                    .map(m -> m.api().contains(c.getPackageName()))
                    .orElse(false));
  }

  private static boolean isVisible(Set<JavaModifier> modifiers) {
    return (modifiers.contains(JavaModifier.PUBLIC) || modifiers.contains(JavaModifier.PROTECTED))
        && !modifiers.contains(JavaModifier.SYNTHETIC);
  }

  private static boolean isInternal(JavaClass type) {
    return MODULES.values().stream().anyMatch(m -> m.internal().contains(type.getPackageName()));
  }

  /**
   * No internal type in what a user compiles against: the supertypes and type parameters, and the
   * types (with their type arguments) of every public or protected field, constructor and method.
   */
  private static ArchCondition<JavaClass> exposeNoInternalType() {
    return new ArchCondition<>("expose no internal type in a public or protected signature") {
      @Override
      public void check(JavaClass c, ConditionEvents events) {
        Map<String, Set<JavaClass>> exposed = new TreeMap<>();
        List<JavaType> supertypes = new ArrayList<>(c.getInterfaces());
        c.getSuperclass().ifPresent(supertypes::add);
        supertypes.addAll(c.getTypeParameters());
        exposed.put(c.getName() + " (its supertypes and type parameters)", rawTypes(supertypes));
        for (JavaMember member : c.getMembers()) {
          if (!isVisible(member.getModifiers())) {
            continue;
          }
          List<JavaType> types = new ArrayList<>();
          if (member instanceof JavaField field) {
            types.add(field.getType());
          } else if (member instanceof JavaCodeUnit code) {
            types.add(code.getReturnType());
            types.addAll(code.getParameterTypes());
            types.addAll(code.getExceptionTypes());
            types.addAll(code.getTypeParameters());
          }
          exposed.put(member.getFullName(), rawTypes(types));
        }
        exposed.forEach(
            (where, types) ->
                types.stream()
                    .filter(BoundariesTest::isInternal)
                    .forEach(
                        t ->
                            events.add(
                                SimpleConditionEvent.violated(
                                    c, where + " exposes internal type " + t.getName()))));
      }
    };
  }

  private static Set<JavaClass> rawTypes(List<? extends JavaType> types) {
    return types.stream()
        .flatMap(t -> t.getAllInvolvedRawTypes().stream())
        .collect(Collectors.toSet());
  }
}
