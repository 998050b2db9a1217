package dev.once.http;

import org.jspecify.annotations.Nullable;

/**
 * A route option's value was refused. Front ends report it under their own spelling of the option
 * (a YAML path, a Spring property) using {@link #option()} and {@link #reason()}.
 */
public final class InvalidRouteOptionException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final String option;
  private final @Nullable String reason;

  InvalidRouteOptionException(String option, @Nullable String reason) {
    super(option + ": " + reason);
    this.option = option;
    this.reason = reason;
  }

  /** The option's name, e.g. {@code lease}; empty when the options contradict each other. */
  public String option() {
    return option;
  }

  /** Why the value was refused, without the option's name. */
  public @Nullable String reason() {
    return reason;
  }
}
