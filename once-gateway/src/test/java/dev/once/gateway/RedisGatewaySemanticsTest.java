package dev.once.gateway;

import dev.once.http.kit.RealStores;
import dev.once.store.IdempotencyStore;

/**
 * The contract kit ({@link GatewaySemanticsTest}) on the machine's Redis, which gathers concurrent
 * claims into scripts: the shared store that gateways scaled out use.
 */
class RedisGatewaySemanticsTest extends GatewaySemanticsTest {

  @Override
  protected IdempotencyStore store() {
    return RealStores.redis("once-gateway-test-");
  }
}
