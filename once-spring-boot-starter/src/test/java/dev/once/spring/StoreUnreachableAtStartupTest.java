package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.once.spring.shop.FakeShopApplication;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

/**
 * A store that is down at startup stops the application with one line naming the store and its
 * address (Boot's failure analysis), not a stack trace; a store that is up is named in one INFO
 * line. The down stores are loopback ports nothing listens on.
 */
@Timeout(120)
@ExtendWith(OutputCaptureExtension.class)
class StoreUnreachableAtStartupTest {

  private static final String PASSWORD = "s3cret-never-logged";

  @Test
  void aPostgresStoreThatIsDownStopsStartupWithOneLineNamingItsAddress(CapturedOutput output)
      throws IOException {
    int port = closedPort();

    Throwable failure =
        start(
            "spring.datasource.url=jdbc:postgresql://127.0.0.1:" + port + "/test",
            "spring.datasource.username=postgres",
            "spring.datasource.password=" + PASSWORD);

    assertThat(causes(failure)).hasAtLeastOneElementOfType(OnceStoreUnreachableException.class);
    assertThat(output.getAll())
        .contains(
            "Once: the PostgreSQL store at 127.0.0.1:"
                + port
                + "/test is unreachable (connection refused)")
        .contains("Start the database, or point spring.datasource.url at one that is up")
        .doesNotContain(PASSWORD);
  }

  @Test
  void aRedisStoreThatIsDownStopsStartupWithOneLineNamingItsAddress(CapturedOutput output)
      throws IOException {
    int port = closedPort();

    Throwable failure =
        start(
            "once.store.type=redis",
            "spring.data.redis.host=127.0.0.1",
            "spring.data.redis.port=" + port,
            "spring.data.redis.database=5",
            "spring.data.redis.password=" + PASSWORD);

    assertThat(causes(failure)).hasAtLeastOneElementOfType(OnceStoreUnreachableException.class);
    assertThat(output.getAll())
        .contains(
            "Once: the Redis store at 127.0.0.1:"
                + port
                + " database 5 is unreachable (connection refused)")
        .contains("Start Redis, or point spring.data.redis.* at one that is up")
        .doesNotContain(PASSWORD);
  }

  @Test
  void theStoreThatWasPickedIsNamedOnceAtStartup(CapturedOutput output) {
    PostgresService.require();
    String table = PostgresService.freshTable("once_records_named");
    try {
      Throwable failure =
          start(
              "spring.datasource.url=" + PostgresService.URL,
              "spring.datasource.username=postgres",
              "once.store.table-name=" + table);

      assertThat(failure).isNull();
      assertThat(output.getAll())
          .containsOnlyOnce("Once store: PostgreSQL at 127.0.0.1:5432/test, table " + table);
    } finally {
      try {
        PostgresService.drop(table);
      } catch (java.sql.SQLException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  @Test
  void aRedisStoreIsNamedWithTheDatabaseItUses(CapturedOutput output) {
    String prefix = "once-named-" + java.util.UUID.randomUUID() + ":";

    Throwable failure =
        start(
            "once.store.type=redis",
            "spring.data.redis.host=127.0.0.1",
            "spring.data.redis.port=6379",
            "spring.data.redis.database=3",
            "once.store.redis.key-prefix=" + prefix);

    assertThat(failure).isNull();
    assertThat(output.getAll())
        .containsOnlyOnce("Once store: Redis at 127.0.0.1:6379 database 3, key prefix " + prefix);
  }

  /** Starts the application (and stops it if it started); the failure, or null. */
  private static Throwable start(String... properties) {
    return catchThrowable(
        () ->
            new SpringApplicationBuilder(FakeShopApplication.class)
                .properties("server.port=0", "server.address=127.0.0.1")
                .properties(properties)
                .run()
                .close());
  }

  private static java.util.List<Throwable> causes(Throwable failure) {
    java.util.List<Throwable> chain = new java.util.ArrayList<>();
    for (Throwable t = failure; t != null && chain.size() < 50; t = t.getCause()) {
      chain.add(t);
    }
    return chain;
  }

  /** A loopback port that nothing listens on: bound for a moment to find it, then closed. */
  private static int closedPort() throws IOException {
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return s.getLocalPort();
    }
  }
}
