package dev.once.chaos;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.tck.RequiredServices;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Small chaos runs, one per system under test, each with its faults: lost responses, client
 * timeouts on an upstream slower than the lease, SIGKILL and restart of the server, SIGKILL and
 * restart of the store. Every run's ledger audit must pass; a deliberately broken gateway must fail
 * it. Sizes are small for CI on a busy machine; {@code docs/reliability.md} has the large runs.
 */
@Tag("chaos")
@Timeout(value = 10, unit = TimeUnit.MINUTES)
class ChaosHarnessTest {

  @Test
  void gatewayOnTheEmbeddedStoreSurvivesAKillLostResponsesAndASlowUpstream() {
    AuditReport report =
        run(
            "--target",
            "gateway",
            "--store",
            "embedded",
            "--operations",
            "150",
            "--clients",
            "6",
            "--kills",
            "1",
            "--drop-percent",
            "8",
            "--slow-percent",
            "3");

    assertThat(report.passed()).as(report.row()).isTrue();
    assertThat(report.kills()).isEqualTo(1);
    assertThat(report.droppedResponses()).isPositive();
  }

  /**
   * Up to eight clients send each operation with its key at the same moment, while the gateway is
   * killed and responses are lost: the embedded store never gathers two copies into one grant.
   */
  @Test
  void gatewayOnTheEmbeddedStoreRunsConcurrentDuplicatesOnce() {
    AuditReport report =
        run(
            "--target",
            "gateway",
            "--store",
            "embedded",
            "--operations",
            "120",
            "--clients",
            "4",
            "--duplicates",
            "8",
            "--kills",
            "1",
            "--drop-percent",
            "5",
            "--slow-percent",
            "2");

    assertThat(report.passed()).as(report.row()).isTrue();
  }

  /**
   * The shared store users scale out on, which gathers concurrent claims into one transaction:
   * concurrent duplicates of every operation, a kill of the gateway and a restart of PostgreSQL.
   */
  @Test
  void gatewayOnPostgresRunsConcurrentDuplicatesOnceThroughAKillAndARestart() {
    RequiredServices.assume(
        PostgresCluster.available(), "PostgreSQL 15 binaries and the postgres OS user");

    AuditReport report =
        run(
            "--target",
            "gateway",
            "--store",
            "postgres",
            "--operations",
            "150",
            "--clients",
            "6",
            "--duplicates",
            "4",
            "--kills",
            "1",
            "--store-restarts",
            "1",
            "--drop-percent",
            "5",
            "--slow-percent",
            "2");

    assertThat(report.passed()).as(report.row()).isTrue();
    assertThat(report.storeRestarts()).isEqualTo(1);
  }

  @Test
  void gatewayOnRedisSurvivesARestartOfRedisAndConcurrentDuplicates() {
    RequiredServices.assume(
        RedisServer.available(), "redis-server (to start one the harness owns)");

    AuditReport report =
        run(
            "--target",
            "gateway",
            "--store",
            "redis",
            "--operations",
            "150",
            "--clients",
            "6",
            "--kills",
            "1",
            "--store-restarts",
            "1",
            "--drop-percent",
            "5",
            "--slow-percent",
            "2",
            "--duplicates",
            "4");

    assertThat(report.passed()).as(report.row()).isTrue();
    assertThat(report.storeRestarts()).isEqualTo(1);
  }

  @Test
  void paymentsInTransactionalModeSurviveAKillAndAPostgresRestart() {
    RequiredServices.assume(
        PostgresCluster.available(), "PostgreSQL 15 binaries and the postgres OS user");
    Path jar = Path.of(System.getProperty("once.chaos.paymentsJar", "missing"));
    RequiredServices.assume(Files.isRegularFile(jar), "the payments example's jar " + jar);

    AuditReport report =
        run(
            "--target",
            "payments",
            "--operations",
            "120",
            "--clients",
            "6",
            "--kills",
            "1",
            "--store-restarts",
            "1",
            "--drop-percent",
            "8");

    assertThat(report.passed()).as(report.row()).isTrue();
  }

  @Test
  void aGatewayThatForgetsCompletionsFailsTheAudit() {
    int status =
        ChaosHarness.status(
            args(
                "--target",
                "gateway",
                "--store",
                "embedded",
                "--upstream",
                "naive",
                "--operations",
                "60",
                "--clients",
                "4",
                "--kills",
                "0",
                "--drop-percent",
                "25",
                "--slow-percent",
                "0",
                "--gateway-main",
                "dev.once.gateway.ForgetfulGateway"));

    assertThat(status).isEqualTo(1);
  }

  @Test
  void aBadCommandLineExitsWithTwo() {
    assertThat(ChaosHarness.status(new String[] {"--operations", "0"})).isEqualTo(2);
    assertThat(ChaosHarness.status(new String[] {"--store", "embedded", "--store-restarts", "1"}))
        .isEqualTo(2);
    assertThat(ChaosHarness.status(new String[] {"--frobnicate", "1"})).isEqualTo(2);
    assertThat(ChaosHarness.status(new String[] {"--duplicates", "9"})).isEqualTo(2);
  }

  private static AuditReport run(String... args) {
    AuditReport report = new ChaosHarness(ChaosHarness.parse(args(args))).run();
    System.out.println(AuditReport.header() + "\n" + report.row());
    return report;
  }

  private static String[] args(String... args) {
    List<String> all = new ArrayList<>(List.of(args));
    all.addAll(List.of("--lease-ms", "2000", "--seed", "7"));
    return all.toArray(String[]::new);
  }
}
