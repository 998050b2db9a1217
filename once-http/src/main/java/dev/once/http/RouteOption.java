package dev.once.http;

import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * One route option, declared once in {@link RouteOptions} and spelled the same by every front end:
 * the gateway's YAML key, the Spring property {@code once.defaults.<name>} / {@code
 * once.routes[n].<name>}, and the row of the option tables in {@code docs/}. Front ends turn their
 * own text into a value of the option's {@link Type} and hand it to {@link RouteOptions#apply},
 * where the core builders validate it: one validation path for every front end.
 */
public final class RouteOption {

  /**
   * The kind of value an option takes, and what {@link RouteOptions#apply} accepts for it. Front
   * ends parse durations and sizes in their own notation ({@code 30s}, Spring's {@code DataSize}).
   */
  public enum Type {
    /** A {@link java.time.Duration}. */
    DURATION,
    /** A byte count: any {@link Number}, at most 2 GiB. */
    BYTES,
    /** A whole number: any {@link Number}. */
    COUNT,
    /** A {@link Boolean}, or the text {@code true}/{@code false}. */
    BOOLEAN,
    /** A {@link List} of text, or one text. */
    LIST,
    /** One of {@link RouteOption#choices()}, as text; an enum constant is accepted by its name. */
    CHOICE,
    /** One text, e.g. a header name. */
    TEXT
  }

  private final String name;
  private final Type type;
  private final List<String> choices;
  private final String description;
  private final Function<RoutePolicy, String> shownDefault;
  private final BiConsumer<RouteDraft, Object> setter;

  RouteOption(
      String name,
      Type type,
      List<String> choices,
      String description,
      Function<RoutePolicy, String> shownDefault,
      BiConsumer<RouteDraft, Object> setter) {
    this.name = name;
    this.type = type;
    this.choices = List.copyOf(choices);
    this.description = description;
    this.shownDefault = shownDefault;
    this.setter = setter;
  }

  /** The kebab-case name, e.g. {@code max-response-bytes}. */
  public String name() {
    return name;
  }

  public Type type() {
    return type;
  }

  /** For {@link Type#CHOICE}, the values allowed, in lower-case kebab form; otherwise empty. */
  public List<String> choices() {
    return choices;
  }

  /** One line for help texts, configuration metadata and docs. */
  public String description() {
    return description;
  }

  /** The default, as docs show it, read from {@link RoutePolicy#DEFAULTS}. */
  public String defaultValue() {
    return shownDefault.apply(RoutePolicy.DEFAULTS);
  }

  void apply(RouteDraft draft, Object value) {
    setter.accept(draft, value);
  }

  @Override
  public String toString() {
    return name;
  }
}
