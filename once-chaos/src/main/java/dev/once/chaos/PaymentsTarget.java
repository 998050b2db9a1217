package dev.once.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpRequest;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * The payments example (examples/payments, Spring Boot, transactional mode) as a child JVM on a
 * fixed loopback port, over a PostgreSQL the harness owns: the claim, the double-entry ledger
 * writes and the recorded response commit in one transaction. The effects are rows of {@code
 * pay_payments}.
 */
final class PaymentsTarget implements Target {

  /** What every operation pays with: the example's demo merchant and wallets. */
  private static final String API_KEY = "sk_test_acme";

  /** The example's default lease (the starter's default). */
  private static final Duration LEASE = Duration.ofSeconds(30);

  private final Path dir;
  private final PostgresCluster postgres;
  private final int port;
  private final ChildProcess app;

  private PaymentsTarget(Path dir, PostgresCluster postgres, int port, ChildProcess app) {
    this.dir = dir;
    this.postgres = postgres;
    this.port = port;
    this.app = app;
  }

  static PaymentsTarget start(Path jar, List<String> jvmOptions) {
    if (!Files.isRegularFile(jar)) {
      throw new IllegalArgumentException(
          "paymentsJar must be the payments example's jar"
              + " (mvn -pl examples/payments -am package -DskipTests), was "
              + jar);
    }
    Path dir = null;
    PostgresCluster postgres = null;
    try {
      dir = Files.createTempDirectory("once-chaos-payments-");
      postgres = PostgresCluster.single();
      int port = Commands.freePort();
      List<String> command = ChildProcess.javaCommand(jvmOptions);
      command.addAll(
          List.of(
              "-jar",
              jar.toString(),
              "--server.address=127.0.0.1",
              "--server.port=" + port,
              "--spring.profiles.active=postgres",
              "--spring.datasource.url=jdbc:postgresql://127.0.0.1:"
                  + postgres.primaryPort()
                  + "/postgres",
              "--spring.datasource.username=postgres",
              "--spring.datasource.hikari.connection-timeout=2000",
              "--spring.main.banner-mode=off"));
      ChildProcess app =
          new ChildProcess(
              "payments-" + port,
              command,
              Pattern.compile("Started PaymentsApplication"),
              Duration.ofMinutes(4),
              dir.resolve("payments.log"));
      PaymentsTarget target = new PaymentsTarget(dir, postgres, port, app);
      app.start();
      // Every operation debits the same wallet: give it enough for any run.
      target.update("UPDATE pay_accounts SET balance = 1000000000000000 WHERE id = 'acme_main'");
      return target;
    } catch (IOException e) {
      closeAll(postgres, dir);
      throw new UncheckedIOException(e);
    } catch (RuntimeException e) {
      closeAll(postgres, dir);
      throw e;
    }
  }

  @Override
  public String name() {
    return "payments/postgres (transactional)";
  }

  @Override
  public int port() {
    return port;
  }

  @Override
  public Duration lease() {
    return LEASE;
  }

  @Override
  public HttpRequest.Builder request(URI base, long n, boolean slow) {
    // The example has no slow path; its writes are quick. The amount names the operation.
    return HttpRequest.newBuilder(base.resolve("/api/payments"))
        .header("Content-Type", "application/json")
        .header("Api-Key", API_KEY)
        .POST(
            HttpRequest.BodyPublishers.ofString(
                "{\"amount\":"
                    + (n + 1)
                    + ",\"currency\":\"EUR\",\"source\":\"acme_main\",\"destination\":\"acme_payouts\"}"));
  }

  @Override
  public boolean hasStoreProcess() {
    return true;
  }

  @Override
  public void crashAndRestart() {
    app.killAndRestart();
  }

  @Override
  public void crashAndRestartStore() {
    postgres.crashAndRestartPrimary();
  }

  @Override
  public Map<Long, Ledger> ledger() {
    Map<Long, Ledger> ledger = new HashMap<>();
    try (Connection c = connect();
        Statement s = c.createStatement();
        ResultSet rs =
            s.executeQuery("SELECT amount, count(*) FROM pay_payments GROUP BY amount")) {
      while (rs.next()) {
        ledger.put(rs.getLong(1), new Ledger(rs.getInt(2), List.of()));
      }
    } catch (SQLException e) {
      throw new IllegalStateException("cannot read the payments ledger", e);
    }
    return ledger;
  }

  private void update(String sql) {
    try (Connection c = connect();
        Statement s = c.createStatement()) {
      s.executeUpdate(sql);
    } catch (SQLException e) {
      throw new IllegalStateException("cannot prepare the payments database", e);
    }
  }

  private Connection connect() throws SQLException {
    return DriverManager.getConnection(postgres.primaryJdbcUrl(), postgres.user(), "");
  }

  @Override
  public void close() {
    app.close();
    closeAll(postgres, dir);
  }

  private static void closeAll(@Nullable PostgresCluster postgres, @Nullable Path dir) {
    if (postgres != null) {
      postgres.close();
    }
    Commands.deleteTree(dir);
  }
}
