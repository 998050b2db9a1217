package dev.once.store.jdbc;

/**
 * Whether sqlite-jdbc, the embedded store's engine, is on the classpath. The dependency is
 * optional, so that users of the server databases do not carry a 14 MB driver they never load; this
 * class names no {@code org.sqlite} type, so it loads without the driver, and code that does name
 * one ({@link EmbeddedConnection}) runs only when the driver is present.
 */
final class SqliteDriver {

  static final boolean PRESENT = isPresent();

  private SqliteDriver() {}

  /**
   * Fails at once, naming the missing artifact, instead of with a {@link NoClassDefFoundError}
   * later.
   */
  static void require() {
    if (!PRESENT) {
      throw new IllegalStateException(
          "EmbeddedStore needs the SQLite driver: add org.xerial:sqlite-jdbc to the"
              + " application's dependencies (once-store-jdbc declares it optional; see docs/embedded-store.md)");
    }
  }

  private static boolean isPresent() {
    try {
      Class.forName("org.sqlite.JDBC", false, SqliteDriver.class.getClassLoader());
      return true;
    } catch (ClassNotFoundException | LinkageError e) {
      return false;
    }
  }
}
