package dev.once.store.jdbc.support;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * Reads a versioned schema file (the same file Flyway or Liquibase users apply) and adapts it to a
 * configured table name, so that opt-in schema creation and hand-run migrations never drift apart.
 *
 * <p>A file names its table by the default name (the {@code placeholder}, such as {@code
 * once_records}). Each occurrence, and each derived name such as {@code once_records_seq}, becomes
 * the configured name; after {@code INDEX} or {@code TRIGGER} (whose names SQL does not let one
 * schema-qualify) it becomes the unqualified name. The configured name has passed {@link
 * TableName}'s strict pattern, so the substitution cannot inject SQL.
 *
 * <p>Part of the JDBC support API (see {@code package-info}): the JDBC stores and the outbox apply
 * their schema files with it.
 */
public final class Migrations {

  private static final Pattern UNQUALIFIED_CONTEXT =
      Pattern.compile("(?i)(?:INDEX|TRIGGER)\\s+(?:IF\\s+(?:NOT\\s+)?EXISTS\\s+)?$");

  private Migrations() {}

  /**
   * Runs the statements of {@code resource} for {@code table} on {@code connection}, after {@code
   * lockStatement} unless it is null, in the caller's transaction: the caller commits.
   */
  public static void apply(
      Connection connection,
      String resource,
      String placeholder,
      TableName table,
      @Nullable String lockStatement,
      int timeoutSeconds)
      throws SQLException {
    try (Statement s = connection.createStatement()) {
      s.setQueryTimeout(timeoutSeconds);
      if (lockStatement != null) {
        s.execute(lockStatement);
      }
      for (String sql : statements(resource, placeholder, table)) {
        s.execute(sql);
      }
    }
  }

  /** The statements of {@code resource} for {@code table}, in order. */
  public static List<String> statements(String resource, String placeholder, TableName table) {
    return split(substitute(read(resource), placeholder, table));
  }

  static String substitute(String script, String placeholder, TableName table) {
    Matcher m =
        Pattern.compile("(?<![A-Za-z0-9_$.\"`])" + Pattern.quote(placeholder)).matcher(script);
    StringBuilder out = new StringBuilder(script.length());
    while (m.find()) {
      String before = script.substring(Math.max(0, m.start() - 40), m.start());
      String name = UNQUALIFIED_CONTEXT.matcher(before).find() ? table.name() : table.qualified();
      m.appendReplacement(out, Matcher.quoteReplacement(name));
    }
    m.appendTail(out);
    return out.toString();
  }

  /** Splits on semicolons that end a line outside {@code $$} bodies; drops comment-only lines. */
  static List<String> split(String script) {
    List<String> statements = new ArrayList<>();
    StringBuilder current = new StringBuilder();
    boolean inBody = false;
    for (String line : script.split("\n", -1)) {
      String trimmed = line.strip();
      if (!inBody && (trimmed.isEmpty() || trimmed.startsWith("--"))) {
        continue;
      }
      current.append(line).append('\n');
      if (countOf(line, "$$") % 2 == 1) {
        inBody = !inBody;
      }
      if (!inBody && trimmed.endsWith(";")) {
        String sql = current.toString().strip();
        statements.add(sql.substring(0, sql.length() - 1));
        current.setLength(0);
      }
    }
    if (!current.toString().isBlank()) {
      statements.add(current.toString().strip());
    }
    return statements;
  }

  private static int countOf(String s, String part) {
    int n = 0;
    for (int i = s.indexOf(part); i >= 0; i = s.indexOf(part, i + part.length())) {
      n++;
    }
    return n;
  }

  private static String read(String resource) {
    try (InputStream in = Migrations.class.getClassLoader().getResourceAsStream(resource)) {
      if (in == null) {
        throw new IllegalStateException(
            "schema file " + resource + " is missing from the classpath");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read schema file " + resource, e);
    }
  }
}
