package dev.once.gateway;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/** Tests that share one running {@link TestGateway}; each test uses its own keys and paths. */
@Timeout(60)
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class GatewayTest {

  TestGateway gw;
  Client client;

  @BeforeAll
  void start() throws Exception {
    gw = TestGateway.start();
    client = gw.client;
  }

  @AfterAll
  void stop() {
    gw.close();
  }
}
