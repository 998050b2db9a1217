package dev.once.store.jdbc.support;

import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A validated table name, optionally schema-qualified ({@code schema.table}). Part of the JDBC
 * support API (see {@code package-info}): the JDBC stores and the outbox validate names with it.
 *
 * <p>The name is spliced into SQL text (identifiers cannot be bind parameters), so it is held to a
 * strict pattern: each part is a letter or underscore followed by at most 47 letters, digits or
 * underscores. That excludes quotes, spaces, semicolons and comments, so no configuration value can
 * change the shape of a statement; and it leaves room for the suffixes of derived objects ({@code
 * _seq}, {@code _expires_idx}) within every database's 64-character identifier limit.
 */
public record TableName(@Nullable String schema, String name) {

  private static final Pattern PART = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,47}");

  public TableName {
    if (schema != null && !PART.matcher(schema).matches()) {
      throw invalid(schema + "." + name);
    }
    if (name == null || !PART.matcher(name).matches()) {
      throw invalid(schema == null ? name : schema + "." + name);
    }
  }

  /**
   * Parses {@code table} or {@code schema.table}; throws {@link IllegalArgumentException}
   * otherwise.
   */
  public static TableName parse(String value) {
    if (value == null) {
      throw invalid(null);
    }
    int dot = value.indexOf('.');
    if (dot < 0) {
      return new TableName(null, value);
    }
    if (value.indexOf('.', dot + 1) >= 0) {
      throw invalid(value);
    }
    String schema = value.substring(0, dot);
    if (!PART.matcher(schema).matches()) {
      throw invalid(value);
    }
    return new TableName(schema, value.substring(dot + 1));
  }

  /** The name as SQL refers to it: {@code schema.table} or {@code table}. */
  public String qualified() {
    return schema == null ? name : schema + "." + name;
  }

  private static IllegalArgumentException invalid(@Nullable String value) {
    return new IllegalArgumentException(
        "tableName must be an identifier [A-Za-z_][A-Za-z0-9_]{0,47}, optionally "
            + "schema-qualified as schema.table; was "
            + (value == null ? "null" : "'" + value + "'"));
  }

  @Override
  public String toString() {
    return qualified();
  }
}
