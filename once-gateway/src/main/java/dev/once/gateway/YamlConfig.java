package dev.once.gateway;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * Reads the YAML configuration file: the scalar options under their own names, a {@code defaults}
 * section and a {@code routes} list. SnakeYAML's {@link SafeConstructor} builds only maps, lists
 * and scalars, so a config file can never instantiate classes.
 */
final class YamlConfig {

  private YamlConfig() {}

  /**
   * Applies the file's options to {@code builder}; throws {@link ConfigException} naming file and
   * key.
   */
  static void apply(Path file, GatewayConfig.Builder builder) {
    Map<String, Object> root = read(file);
    Map<String, Option> options = Options.byName();
    for (Map.Entry<String, Object> e : root.entrySet()) {
      String key = e.getKey();
      if (key.equals("routes") || key.equals("defaults")) {
        continue;
      }
      Option option = options.get(key);
      if (option == null) {
        throw new ConfigException(
            file
                + ": unknown key '"
                + key
                + "'; known keys: routes, defaults, "
                + String.join(", ", options.keySet()));
      }
      if (e.getValue() == null || e.getValue() instanceof Map || e.getValue() instanceof List) {
        throw new ConfigException(file + ": " + key + " must be a single value");
      }
      option.apply(builder, String.valueOf(e.getValue()), file + ": " + key);
    }
    Map<String, Object> defaults = Map.of();
    if (root.containsKey("defaults")) {
      Map<String, Object> d = map(root.get("defaults"), file + ": defaults");
      if (d.containsKey("pattern")) {
        throw new ConfigException(
            file + ": defaults: 'pattern' belongs in a route, not in defaults");
      }
      defaults = RoutePolicies.options(d, file + ": defaults");
      builder.defaults(RoutePolicies.policy(defaults, file + ": defaults"));
    }
    if (root.containsKey("routes")) {
      if (!(root.get("routes") instanceof List<?> list)) {
        throw new ConfigException(file + ": routes must be a list of routes, each with a pattern");
      }
      List<GatewayConfig.RouteSpec> routes = new ArrayList<>();
      for (int i = 0; i < list.size(); i++) {
        String where = file + ": routes[" + i + "]";
        Map<String, Object> r = map(list.get(i), where);
        Object pattern = r.get("pattern");
        if (!(pattern instanceof String p) || !p.startsWith("/")) {
          throw new ConfigException(
              where + ".pattern: must be a path pattern starting with '/', was '" + pattern + "'");
        }
        // A route's own options over the defaults' options, applied once: a value the defaults set
        // (say max-wait) still counts when the route is the one that turns its mode on.
        Map<String, Object> values = new LinkedHashMap<>(defaults);
        values.putAll(RoutePolicies.options(r, where));
        try {
          routes.add(new GatewayConfig.RouteSpec(p, RoutePolicies.policy(values, where)));
        } catch (IllegalArgumentException e) {
          throw new ConfigException(where + ".pattern: " + e.getMessage());
        }
      }
      builder.routes(routes);
    }
  }

  private static Map<String, Object> read(Path file) {
    LoaderOptions options = new LoaderOptions();
    options.setAllowDuplicateKeys(false);
    options.setMaxAliasesForCollections(20);
    options.setCodePointLimit(1 << 20);
    Object doc;
    try (Reader in = Files.newBufferedReader(file, StandardCharsets.UTF_8)) {
      doc = new Yaml(new SafeConstructor(options)).load(in);
    } catch (IOException e) {
      throw new ConfigException("config " + file + ": cannot read it (" + e.getMessage() + ")");
    } catch (YAMLException e) {
      throw new ConfigException(
          "config "
              + file
              + ": not valid YAML: "
              + String.valueOf(e.getMessage()).replace('\n', ' '));
    }
    if (doc == null) {
      return Map.of();
    }
    return map(doc, "config " + file);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object value, String where) {
    if (!(value instanceof Map<?, ?> m)) {
      throw new ConfigException(where + ": must be a mapping of keys to values");
    }
    for (Object k : m.keySet()) {
      if (!(k instanceof String)) {
        throw new ConfigException(where + ": key '" + k + "' must be text");
      }
    }
    return (Map<String, Object>) m;
  }
}
