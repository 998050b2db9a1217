package dev.once.gateway;

import dev.once.store.IdempotencyStore;
import dev.once.store.jdbc.EmbeddedStore;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterAll;

/**
 * The contract kit ({@link GatewaySemanticsTest}) on the gateway's default store, the embedded one.
 */
class EmbeddedGatewaySemanticsTest extends GatewaySemanticsTest {

  private Path dir;

  @Override
  protected IdempotencyStore store() throws Exception {
    dir = Files.createTempDirectory("once-gateway-kit-store-");
    return EmbeddedStore.builder(dir)
        .durability(EmbeddedStore.Durability.SURVIVES_PROCESS_CRASH)
        .build();
  }

  @AfterAll
  void deleteTheStoreFile() {
    TestGateway.delete(dir);
  }
}
