package dev.once.store.jdbc;

import dev.once.internal.Arguments;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Objects;
import javax.sql.DataSource;

/**
 * Options of the stores that run on a database server through the user's {@link DataSource}.
 *
 * @param <B> the concrete builder
 */
abstract class ServerStoreBuilder<B extends ServerStoreBuilder<B>> extends JdbcStoreBuilder<B> {

  final DataSource dataSource;
  boolean autoCreateSchema;

  ServerStoreBuilder(DataSource dataSource) {
    this.dataSource = Arguments.present("dataSource", dataSource);
  }

  /**
   * Whether {@code build()} creates the table, sequence, index and triggers if they are missing,
   * from the same versioned file a migration tool would apply; default {@code false}, because
   * production schemas are usually owned by a migration tool. With {@code true}, {@code build()}
   * needs the database to be reachable.
   */
  @SuppressWarnings("unchecked")
  public B autoCreateSchema(boolean autoCreateSchema) {
    this.autoCreateSchema = autoCreateSchema;
    return (B) this;
  }

  void createSchemaIfAsked(Dialect dialect) {
    if (!autoCreateSchema) {
      return;
    }
    try (Connection c = dataSource.getConnection()) {
      SchemaCreator.create(c, dialect, timeoutSeconds());
    } catch (SQLException e) {
      throw Failures.unavailable("schema creation", table, e);
    }
  }

  DataSource dataSource() {
    return Objects.requireNonNull(dataSource);
  }
}
