package dev.once.gateway;

/**
 * A configuration the gateway refuses to start with; the message names the option and its source.
 */
final class ConfigException extends RuntimeException {

  private static final long serialVersionUID = 1L;

  ConfigException(String message) {
    super(message);
  }
}
