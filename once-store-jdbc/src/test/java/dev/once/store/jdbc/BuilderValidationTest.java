package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.time.Duration;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Builders reject bad options when they are set, naming the option and the value. */
class BuilderValidationTest {

  /** Building without schema creation never touches the database, so no server is needed here. */
  static final DataSource UNUSED =
      new DataSource() {
        @Override
        public Connection getConnection() {
          throw new AssertionError("not used");
        }

        @Override
        public Connection getConnection(String user, String password) {
          throw new AssertionError("not used");
        }

        @Override
        public PrintWriter getLogWriter() {
          return null;
        }

        @Override
        public void setLogWriter(PrintWriter out) {}

        @Override
        public void setLoginTimeout(int seconds) {}

        @Override
        public int getLoginTimeout() {
          return 0;
        }

        @Override
        public Logger getParentLogger() {
          return Logger.getGlobal();
        }

        @Override
        public <T> T unwrap(Class<T> iface) {
          return null;
        }

        @Override
        public boolean isWrapperFor(Class<?> iface) {
          return false;
        }
      };

  @TempDir Path dir;

  @Test
  void aNullDataSourceIsRejected() {
    assertThatThrownBy(() -> PostgresStore.builder(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("dataSource");
    assertThatThrownBy(() -> MariaDbStore.builder(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("dataSource");
  }

  @Test
  void anInjectedTableNameIsRejectedBeforeAnySqlRuns() {
    assertThatThrownBy(() -> PostgresStore.builder(UNUSED).tableName("t; DROP TABLE users"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tableName")
        .hasMessageContaining("DROP TABLE");
    assertThatThrownBy(() -> MariaDbStore.builder(UNUSED).tableName("t` WHERE 1"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tableName");
    assertThatThrownBy(() -> EmbeddedStore.builder(dir).tableName("t'--"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("tableName");
  }

  @Test
  void aQueryTimeoutMustBeWholePositiveSeconds() {
    PostgresStore.Builder b = PostgresStore.builder(UNUSED);
    for (Duration bad :
        new Duration[] {
          null,
          Duration.ZERO,
          Duration.ofSeconds(-1),
          Duration.ofMillis(500),
          Duration.ofMillis(1500)
        }) {
      assertThatThrownBy(() -> b.queryTimeout(bad))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessageContaining("queryTimeout")
          .hasMessageContaining(String.valueOf(bad));
    }
    assertThat(b.queryTimeout(Duration.ofSeconds(2))).isSameAs(b);
  }

  @Test
  void aStoreBuildsWithoutTouchingTheDatabaseUnlessAskedToCreateTheSchema() {
    try (PostgresStore pg = PostgresStore.builder(UNUSED).tableName("app.once").build();
        MariaDbStore maria = MariaDbStore.of(UNUSED)) {
      assertThat(pg.tableName()).isEqualTo("app.once");
      assertThat(maria.tableName()).isEqualTo("once_records");
    }
  }

  @Test
  void theEmbeddedStoreNeedsADirectoryAndAnUnqualifiedTable() throws Exception {
    assertThatThrownBy(() -> EmbeddedStore.builder(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("dataDir");
    Path file = Files.createFile(dir.resolve("a-file"));
    assertThatThrownBy(() -> EmbeddedStore.builder(file))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("dataDir")
        .hasMessageContaining("a-file");
    assertThatThrownBy(() -> EmbeddedStore.builder(dir).durability(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("durability");
    assertThatThrownBy(() -> EmbeddedStore.builder(dir).clock(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("clock");
    assertThatThrownBy(() -> EmbeddedStore.builder(dir).tableName("main.once").build())
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("schema-qualified");
  }
}
