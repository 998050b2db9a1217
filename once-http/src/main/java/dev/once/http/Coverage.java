package dev.once.http;

import java.util.Locale;

/**
 * Which requests are guarded at all: a deployment-wide choice, made once, of what the paths that no
 * route names get.
 */
public enum Coverage {

  /**
   * Every path: a path no route matches takes the defaults, so any covered request with a key is
   * recorded, whatever handler answers it.
   */
  ALL,

  /**
   * Only the routes configured (and, in Spring, the {@code @Idempotent} handlers): other paths pass
   * through untouched, so a key sent to them is neither checked nor recorded.
   */
  ROUTES;

  /** As configuration spells it: {@code all}, {@code routes}. */
  public String optionName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * The coverage {@code text} names, in any case.
   *
   * @throws IllegalArgumentException naming the choices
   */
  public static Coverage parse(String text) {
    for (Coverage c : values()) {
      if (c.optionName().equalsIgnoreCase(text == null ? "" : text.trim())) {
        return c;
      }
    }
    throw new IllegalArgumentException("must be all or routes, was '" + text + "'");
  }
}
