package dev.once.spring;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.store.IdempotencyStore;
import dev.once.store.jdbc.PostgresStore;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The method contract on PostgreSQL, the store the starter chose from the application's DataSource;
 * a table of this run's own.
 */
class IdempotentMethodsPostgresTest extends IdempotentMethodsContract {

  private static final String TABLE = PostgresService.freshTable("once_methods");

  @Autowired IdempotencyStore store;

  @BeforeAll
  static void postgresIsUp() {
    PostgresService.require();
  }

  @DynamicPropertySource
  static void database(DynamicPropertyRegistry registry) {
    registry.add("spring.datasource.url", () -> PostgresService.URL);
    registry.add("spring.datasource.username", () -> "postgres");
    registry.add("once.store.table-name", () -> TABLE);
  }

  @AfterAll
  static void dropTable() throws Exception {
    PostgresService.drop(TABLE);
  }

  @Test
  void theStoreIsPostgres() {
    assertThat(store).isInstanceOf(PostgresStore.class);
  }
}
