package dev.once.gateway;

import java.util.Map;

/**
 * The core the suite runs the gateways it starts on: the default, unless the environment says
 * otherwise through the option's own variable ({@code ONCE_CORE}), as the build's second run of the
 * suite does (the {@code jetty-core} execution in this module's pom). Only that variable is taken
 * from the environment, so nothing else a developer has set there changes a test.
 */
final class TestCore {

  private static final String VARIABLE = "ONCE_CORE";

  private TestCore() {}

  /** The environment a gateway in a test is configured with: the core, if one is set. */
  static Map<String, String> env() {
    String core = System.getenv(VARIABLE);
    return core == null ? Map.of() : Map.of(VARIABLE, core);
  }

  /** The core the suite's gateways run on. */
  static ProxyCore core() {
    String core = System.getenv(VARIABLE);
    return core == null
        ? GatewayConfig.builder().upstream("http://127.0.0.1:1").build().core()
        : ProxyCore.parse(core);
  }

  /** Whether the suite runs on the Netty core. */
  static boolean netty() {
    return core() == ProxyCore.NETTY;
  }
}
