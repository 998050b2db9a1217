package dev.once.gateway;

import dev.once.tck.RequiredServices;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;

/**
 * Debian's Chromium, headless, driven through Debian's chromedriver: never a browser or driver
 * fetched at run time. Selenium Manager (which would download both) stays out because the driver's
 * path is given to the service and the browser's to the options: Selenium only asks the manager for
 * what it was not told.
 */
final class HeadlessChromium implements AutoCloseable {

  static final Path BROWSER = Path.of("/usr/bin/chromium");
  static final Path DRIVER = Path.of("/usr/bin/chromedriver");

  final ChromeDriver driver;
  private final Path profile;

  private HeadlessChromium(ChromeDriver driver, Path profile) {
    this.driver = driver;
    this.profile = profile;
  }

  /**
   * Skips the test when Chromium is missing, or fails it where every service is required (CI):
   * {@code .ci/run} installs it.
   */
  static HeadlessChromium start() throws IOException {
    RequiredServices.assume(
        Files.isExecutable(BROWSER) && Files.isExecutable(DRIVER),
        "Chromium and its driver ("
            + BROWSER
            + ", "
            + DRIVER
            + "; apt-get install chromium chromium-driver)");
    Path profile = Files.createTempDirectory("once-console-chromium-");
    ChromeOptions options = new ChromeOptions();
    options.setBinary(BROWSER.toFile());
    options.addArguments(
        "--headless=new",
        // Tests run as root in CI, where Chromium's sandbox cannot start.
        "--no-sandbox",
        "--disable-gpu",
        "--disable-dev-shm-usage",
        "--window-size=1280,900",
        "--force-device-scale-factor=1",
        "--hide-scrollbars",
        "--user-data-dir=" + profile,
        // Nothing but the gateway on loopback: no update checks, sync, or first-run pages.
        "--no-first-run",
        "--no-default-browser-check",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--disable-extensions");
    options.setCapability("goog:loggingPrefs", Map.of("browser", "ALL"));
    ChromeDriverService service =
        new ChromeDriverService.Builder()
            .usingDriverExecutable(DRIVER.toFile())
            .usingAnyFreePort()
            .withTimeout(Duration.ofSeconds(20))
            .build();
    try {
      ChromeDriver driver = new ChromeDriver(service, options);
      driver.manage().timeouts().pageLoadTimeout(Duration.ofSeconds(15));
      driver.manage().timeouts().scriptTimeout(Duration.ofSeconds(10));
      return new HeadlessChromium(driver, profile);
    } catch (RuntimeException e) {
      TestGateway.delete(profile);
      throw e;
    }
  }

  /** The whole page, however long, as a PNG (Chrome's own capture, beyond the window). */
  void screenshot(Path to) throws IOException {
    Map<?, ?> size =
        (Map<?, ?>)
            driver.executeScript(
                "const e = document.documentElement;"
                    + " return {width: e.scrollWidth, height: e.scrollHeight};");
    Map<String, Object> shot =
        driver.executeCdpCommand(
            "Page.captureScreenshot",
            Map.of(
                "format",
                "png",
                "captureBeyondViewport",
                true,
                "clip",
                Map.of(
                    "x", 0,
                    "y", 0,
                    "width", ((Number) size.get("width")).intValue(),
                    "height", ((Number) size.get("height")).intValue(),
                    "scale", 1)));
    Files.createDirectories(to.toAbsolutePath().getParent());
    Files.write(to, Base64.getDecoder().decode((String) shot.get("data")));
  }

  @Override
  public void close() {
    try {
      driver.quit();
    } finally {
      TestGateway.delete(profile);
    }
  }
}
