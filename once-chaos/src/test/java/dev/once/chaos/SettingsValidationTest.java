package dev.once.chaos;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Bad settings are refused up front, naming the option and the value, before anything is started.
 */
class SettingsValidationTest {

  @Test
  void failoverHarnessRefusesBadSettings() {
    assertThatThrownBy(
            () -> new FailoverHarness(null, EffectMode.SEPARATE, 4, Duration.ofSeconds(5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("replication");
    assertThatThrownBy(
            () ->
                new FailoverHarness(
                    Replication.ASYNC, EffectMode.SEPARATE, 0, Duration.ofSeconds(5)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("threads")
        .hasMessageContaining("0");
    assertThatThrownBy(
            () ->
                new FailoverHarness(
                    Replication.ASYNC, EffectMode.SEPARATE, 4, Duration.ofMillis(10)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("load");
  }

  @Test
  void chaosHarnessRefusesBadCommandLines() {
    assertThatThrownBy(() -> ChaosHarness.parse(new String[] {"--target", "mainframe"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("mainframe");
    assertThatThrownBy(() -> ChaosHarness.parse(new String[] {"--store", "floppy"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("--store")
        .hasMessageContaining("floppy");
    assertThatThrownBy(() -> ChaosHarness.parse(new String[] {"--clients"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("needs a value");
    assertThatThrownBy(() -> ChaosHarness.parse(new String[] {"--lease-ms", "100"}))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("lease-ms");
    assertThatThrownBy(() -> ChaosHarness.parse(new String[] {"--store-restarts", "2"}))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("storeRestarts");
  }
}
