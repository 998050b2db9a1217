package dev.once.spring;

import org.jspecify.annotations.Nullable;

/**
 * A {@code once.*} property or an {@link Idempotent} attribute that the core refused. The message
 * names the property (or the attribute and its method), the value and the core's reason; at startup
 * Spring Boot reports it as the application's failure.
 */
public class InvalidOncePropertyException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final String property;
  private final @Nullable String reason;

  InvalidOncePropertyException(String property, @Nullable Object value, @Nullable String reason) {
    super(
        value == null
            ? property + ": " + reason
            : "Invalid value '" + value + "' for " + property + ": " + reason);
    this.property = property;
    this.reason = reason;
  }

  /**
   * The property, e.g. {@code once.routes[0].lease}, or {@code @Idempotent(lease) on
   * Controller#method}.
   */
  public String getProperty() {
    return property;
  }

  /** Why the value was refused. */
  public @Nullable String getReason() {
    return reason;
  }
}
