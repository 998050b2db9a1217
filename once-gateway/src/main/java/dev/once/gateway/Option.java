package dev.once.gateway;

import java.util.Locale;
import java.util.function.BiConsumer;

/**
 * One gateway option, as every source spells it: the flag {@code --name}, the environment variable
 * {@code ONCE_NAME} and the YAML key {@code name}. Its text is parsed and handed to the one {@link
 * GatewayConfig.Builder} setter, so all sources are validated alike.
 *
 * @param name the kebab-case name, e.g. {@code upstream-timeout}
 * @param defaultValue the default, as shown by {@code --help}
 * @param description one line for {@code --help}
 * @param setter parses the text and sets it; throws {@link IllegalArgumentException} on bad input
 */
record Option(
    String name,
    String defaultValue,
    String description,
    BiConsumer<GatewayConfig.Builder, String> setter) {

  String flag() {
    return "--" + name;
  }

  String env() {
    return "ONCE_" + name.toUpperCase(Locale.ROOT).replace('-', '_');
  }

  /** Applies {@code text}, naming the option and where its value came from in any error. */
  void apply(GatewayConfig.Builder builder, String text, String source) {
    try {
      setter.accept(builder, text);
    } catch (IllegalArgumentException e) {
      throw new ConfigException(source + ": " + e.getMessage());
    }
  }
}
