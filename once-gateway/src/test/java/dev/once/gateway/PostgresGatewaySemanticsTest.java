package dev.once.gateway;

import dev.once.http.kit.RealStores;
import dev.once.store.IdempotencyStore;

/**
 * The contract kit ({@link GatewaySemanticsTest}) on the machine's PostgreSQL, which gathers
 * concurrent claims into batches: the shared store that gateways scaled out use.
 */
class PostgresGatewaySemanticsTest extends GatewaySemanticsTest {

  @Override
  protected IdempotencyStore store() {
    return RealStores.postgres("once_gateway_test_");
  }
}
