package dev.once.store.jdbc.support;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

class MigrationsTest {

  @Test
  void theTableAndItsDerivedObjectsTakeTheConfiguredName() {
    String sql =
        Migrations.substitute(
            """
        CREATE TABLE IF NOT EXISTS once_records (a int);
        CREATE SEQUENCE IF NOT EXISTS once_records_seq AS bigint;
        CREATE INDEX IF NOT EXISTS once_records_expires_idx ON once_records (expires_at);
        DROP TRIGGER IF EXISTS once_records_changed ON once_records;
        CREATE TRIGGER once_records_changed AFTER UPDATE ON once_records FOR EACH ROW EXECUTE FUNCTION f();
        """,
            "once_records",
            TableName.parse("billing.idem"));
    assertThat(sql)
        .isEqualTo(
            """
        CREATE TABLE IF NOT EXISTS billing.idem (a int);
        CREATE SEQUENCE IF NOT EXISTS billing.idem_seq AS bigint;
        CREATE INDEX IF NOT EXISTS idem_expires_idx ON billing.idem (expires_at);
        DROP TRIGGER IF EXISTS idem_changed ON billing.idem;
        CREATE TRIGGER idem_changed AFTER UPDATE ON billing.idem FOR EACH ROW EXECUTE FUNCTION f();
        """);
  }

  @Test
  void statementsSplitAtLineEndSemicolonsButNotInsideFunctionBodies() {
    List<String> statements =
        Migrations.split(
            """
        -- a comment;
        CREATE TABLE t (a int);
        CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          PERFORM 1;
          RETURN NULL;
        END
        $$;
        CREATE INDEX i ON t (a);
        """);
    assertThat(statements).hasSize(3);
    assertThat(statements.get(1)).contains("PERFORM 1;").endsWith("$$");
  }

  @Test
  void everyShippedSchemaFileParses() {
    for (String db : List.of("postgresql", "mariadb", "sqlite")) {
      for (String file : List.of("V1__once_records.sql", "V2__once_records_in_flight.sql")) {
        assertThat(
                Migrations.statements(
                    "db/once/" + db + "/" + file, "once_records", TableName.parse("x")))
            .as(db + "/" + file)
            .isNotEmpty()
            .allSatisfy(s -> assertThat(s).doesNotContain("once_records"));
      }
    }
  }
}
