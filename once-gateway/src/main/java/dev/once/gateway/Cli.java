package dev.once.gateway;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The command line: {@code --name value} or {@code --name=value} for every {@link Option}, plus
 * {@code --config FILE}, {@code --demo} and {@code --help}. Sources are applied from weakest to
 * strongest: defaults, the YAML file, the environment, the flags.
 */
final class Cli {

  /** Where the config file's name may come from. */
  static final String CONFIG_FLAG = "config";

  static final String CONFIG_ENV = "ONCE_CONFIG";

  /**
   * What the command line asked for.
   *
   * @param help {@code --help} was given
   * @param demo {@code --demo} was given
   * @param flags option values by option name, in the order given (a repeated flag: the last wins)
   * @param configFile {@code --config}, or {@code null}
   */
  record Parsed(boolean help, boolean demo, Map<String, String> flags, @Nullable Path configFile) {}

  private Cli() {}

  static Parsed parse(String[] args) {
    Map<String, Option> known = Options.byName();
    Map<String, String> flags = new LinkedHashMap<>();
    boolean help = false;
    boolean demo = false;
    Path config = null;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      if (arg.equals("--help") || arg.equals("-h")) {
        help = true;
        continue;
      }
      if (arg.equals("--demo")) {
        demo = true;
        continue;
      }
      if (!arg.startsWith("--") || arg.length() == 2) {
        throw new ConfigException(
            "unexpected argument '" + arg + "'; options look like --port 8080 (see --help)");
      }
      int eq = arg.indexOf('=');
      String name = eq < 0 ? arg.substring(2) : arg.substring(2, eq);
      if (!known.containsKey(name) && !name.equals(CONFIG_FLAG)) {
        throw new ConfigException("unknown option --" + name + " (see --help for every option)");
      }
      String value;
      if (eq >= 0) {
        value = arg.substring(eq + 1);
      } else if (i + 1 < args.length && !args[i + 1].startsWith("--")) {
        value = args[++i];
      } else {
        throw new ConfigException("option --" + name + " needs a value");
      }
      if (name.equals(CONFIG_FLAG)) {
        config = Path.of(value);
      } else {
        flags.put(name, value);
      }
    }
    return new Parsed(help, demo, flags, config);
  }

  /** The builder with every source applied; {@code build()} is left to the caller. */
  static GatewayConfig.Builder configure(Parsed parsed, Map<String, String> env) {
    GatewayConfig.Builder builder = GatewayConfig.builder();
    Path file =
        parsed.configFile() != null
            ? parsed.configFile()
            : env.containsKey(CONFIG_ENV) ? Path.of(env.get(CONFIG_ENV)) : null;
    if (file != null) {
      YamlConfig.apply(file, builder);
    }
    for (Option o : Options.ALL) {
      String value = env.get(o.env());
      if (value != null) {
        o.apply(builder, value, "environment variable " + o.env());
      }
    }
    Map<String, Option> known = Options.byName();
    // parse() let only known names through.
    parsed
        .flags()
        .forEach(
            (name, value) ->
                Objects.requireNonNull(known.get(name)).apply(builder, value, "--" + name));
    return builder;
  }

  static String help() {
    StringBuilder out = new StringBuilder(4096);
    out.append(
            "Once gateway: a reverse proxy that makes POST/PATCH retries with an Idempotency-Key safe.\n\n")
        .append("Usage: java -jar once-gateway.jar --upstream URL [options]\n")
        .append(
            "       java -jar once-gateway.jar --demo        (a demo upstream behind the gateway)\n\n")
        .append(
            "Every option can also be set as an environment variable or a key in the YAML file.\n")
        .append("Precedence: flags > environment > config file > defaults.\n\n");
    row(
        out,
        "--config FILE",
        CONFIG_ENV,
        "(none)",
        "YAML file: these options, 'defaults:' and 'routes:' (docs/gateway.md)");
    for (Option o : Options.ALL) {
      row(out, o.flag() + " V", o.env(), o.defaultValue(), o.description());
    }
    row(
        out,
        "--demo",
        "",
        "",
        "start a non-idempotent demo upstream behind the gateway and print curl lines");
    row(out, "--help", "", "", "print this help");
    return out.toString();
  }

  private static void row(
      StringBuilder out, String flag, String env, String def, String description) {
    out.append(String.format("  %-30s %-30s default %s%n      %s%n", flag, env, def, description));
  }
}
