package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static dev.once.gateway.Problem.assertProblem;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.FakeUnavailableStore;
import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.http.HttpIdempotency;
import dev.once.http.ProblemType;
import dev.once.store.RecordId;
import java.io.IOException;
import java.io.InputStream;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.openqa.selenium.Alert;
import org.openqa.selenium.By;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.WebElement;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.logging.LogEntry;
import org.openqa.selenium.logging.LogType;
import org.openqa.selenium.support.ui.ExpectedConditions;
import org.openqa.selenium.support.ui.WebDriverWait;

/**
 * The operations console on the management port: where it is served and with which headers, what
 * its files may not do, and an operator's session in a real (headless) Chromium.
 */
@Timeout(90)
class ConsoleTest {

  private static final String TOKEN = OperationsTest.TOKEN;

  /** How long the page may take to show what the test waits for: a few 2-second polls. */
  private static final Duration PATIENCE = Duration.ofSeconds(20);

  /** The full-page screenshot of the session, for people to look at (docs/gateway.md#console). */
  private static final Path SCREENSHOT = Path.of("target", "console.png");

  /** A bound on the background traffic: about 40 s at one new key and replay every 250 ms. */
  private static final int STEADY_REQUESTS = 160;

  @Test
  void theConsoleIsOffWithoutAnAdminToken() throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      assertThat(gw.management().get("/console").statusCode()).isEqualTo(404);
      assertThat(gw.management().get("/console/console.js").statusCode()).isEqualTo(404);
    }
  }

  @Test
  void theConsoleIsServedWithAStrictPolicyNoFramingNoCachingAndItsContentTypes() throws Exception {
    try (TestGateway gw = TestGateway.start("--admin-token", TOKEN)) {
      for (String[] file :
          new String[][] {
            {"/console", "text/html"},
            {"/console/", "text/html"},
            {"/console/console.js", "text/javascript"},
            {"/console/console.css", "text/css"}
          }) {
        HttpResponse<String> response = gw.management().get(file[0]);

        assertThat(response.statusCode()).as(file[0]).isEqualTo(200);
        assertThat(response.headers().firstValue("Content-Type"))
            .get()
            .asString()
            .startsWith(file[1]);
        assertThat(response.headers().firstValue("Content-Security-Policy"))
            .as(file[0])
            .hasValue(ConsoleServlet.CONTENT_SECURITY_POLICY);
        assertThat(response.headers().firstValue("X-Frame-Options")).hasValue("DENY");
        assertThat(response.headers().firstValue("Cache-Control")).hasValue("no-store");
        assertThat(response.headers().firstValue("X-Content-Type-Options")).hasValue("nosniff");
      }
      assertThat(ConsoleServlet.CONTENT_SECURITY_POLICY)
          .startsWith("default-src 'self';")
          .doesNotContain("unsafe", "*", "http:", "data:");
      assertThat(gw.management().get("/console/elsewhere.js").statusCode()).isEqualTo(404);
    }
  }

  @Test
  void thePageRunsNoInlineCodeKeepsTheTokenOutOfStorageAndRendersDataAsText() throws IOException {
    String html = resource("index.html");
    String js = resource("console.js");

    // Every script is a file of its own, no inline style or handler (the policy would block them).
    assertThat(html).containsPattern("<script src=\"/console/console.js\"");
    assertThat(Pattern.compile("<script(?![^>]*\\ssrc=)").matcher(html).find()).isFalse();
    assertThat(html).doesNotContain("<style", " style=").doesNotContainPattern("\\son[a-z]+=");
    // Keys and scopes are whatever clients sent: only textContent and DOM calls put them on the
    // page.
    assertThat(js)
        .doesNotContain(
            "innerHTML",
            "outerHTML",
            "insertAdjacentHTML",
            "document.write",
            "eval(",
            "new Function",
            "localStorage",
            "sessionStorage");
  }

  @Test
  void anOperatorWatchesLiveRatesLooksUpAStuckKeyAndForceReleasesIt() throws Exception {
    try (HeadlessChromium chromium = HeadlessChromium.start();
        TestGateway gw = TestGateway.start("--admin-token", TOKEN)) {
      ChromeDriver page = chromium.driver;
      WebDriverWait wait = new WebDriverWait(page, PATIENCE);
      String scope = OperationsTest.scopeOfTheDefaultRoute(gw);
      page.get("http://127.0.0.1:" + gw.gateway.managementPort() + "/console");

      // A wrong token is refused on the page, which stays closed.
      type(page, "token", TOKEN + "-wrong");
      page.findElement(By.id("connect")).click();
      wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("login-error")));
      assertThat(text(page, "login-error")).contains("refused the token (401)");
      assertThat(page.findElement(By.id("console")).isDisplayed()).isFalse();

      type(page, "token", TOKEN);
      page.findElement(By.id("connect")).click();
      wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("charts")));
      // Rates are differences between samples: the traffic comes after the first one.
      wait.until(d -> !text(d, "sampled").isEmpty());

      String done = key();
      assertThat(gw.client.postJson("/payments/console", done, "{}").statusCode()).isEqualTo(201);
      assertThat(
              gw.client
                  .postJson("/payments/console", done, "{}")
                  .headers()
                  .firstValue(HttpIdempotency.REPLAYED_HEADER))
          .hasValue("true");
      assertThat(gw.client.postJson("/payments/console", done, "{\"other\":1}").statusCode())
          .isEqualTo(422);
      // The upstream outlives upstream-timeout (1500ms): the client gets a 504 and the key stays in
      // flight for its lease (30s), as the upstream may still act; its retry is a 409.
      // Its key is markup (keys are any printable ASCII): the page must show it as text.
      String stuck = "<img/src=x/onerror=alert(1)>" + key();
      assertProblem(gw.client.postJson("/slow/2500", stuck, "{}"), 504, "upstream-timeout");
      assertProblem(gw.client.postJson("/slow/2500", stuck, "{}"), ProblemType.IN_FLIGHT);

      // Steady traffic from here to the screenshot, so that the current rates it shows are live.
      ScheduledExecutorService traffic = Executors.newSingleThreadScheduledExecutor();
      AtomicInteger sent = new AtomicInteger();
      traffic.scheduleWithFixedDelay(() -> steadyTraffic(gw, sent), 0, 250, TimeUnit.MILLISECONDS);
      try {
        operate(chromium, wait, gw, scope, stuck);
      } finally {
        traffic.shutdownNow();
        assertThat(traffic.awaitTermination(10, TimeUnit.SECONDS)).isTrue();
      }
    }
  }

  @Test
  void aStoreThatIsDownIsShownWhereTheOperatorAskedForData() throws Exception {
    try (HeadlessChromium chromium = HeadlessChromium.start();
        TestGateway gw =
            TestGateway.start(
                new OpenStore(new FakeUnavailableStore(), () -> {}), "--admin-token", TOKEN)) {
      ChromeDriver page = chromium.driver;
      WebDriverWait wait = new WebDriverWait(page, PATIENCE);
      page.get("http://127.0.0.1:" + gw.gateway.managementPort() + "/console");
      type(page, "token", TOKEN);
      page.findElement(By.id("connect")).click();
      wait.until(ExpectedConditions.visibilityOfElementLocated(By.id("charts")));

      lookUp(page, "sha256:any/POST %2F**", key());
      wait.until(d -> text(d, "lookup-result").contains("(503)"));

      assertThat(text(page, "lookup-result"))
          .isEqualTo("The store is unavailable (503). Try again when it is back.");
    }
  }

  /** A new key and its replay, at most {@link #STEADY_REQUESTS} times, whatever the test does. */
  private static void steadyTraffic(TestGateway gw, AtomicInteger sent) {
    if (sent.incrementAndGet() > STEADY_REQUESTS) {
      return;
    }
    try {
      String k = key();
      gw.client.postJson("/payments/steady", k, "{}");
      gw.client.postJson("/payments/steady", k, "{}");
    } catch (IOException e) {
      // the gateway is stopping with the test
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The operator's part, once the traffic is there. */
  private static void operate(
      HeadlessChromium chromium, WebDriverWait wait, TestGateway gw, String scope, String stuck)
      throws Exception {
    ChromeDriver page = chromium.driver;
    for (String series : List.of("executions", "replays", "conflicts", "mismatches", "latency")) {
      wait.withMessage(() -> "a non-zero peak of " + series + " on the page")
          .until(d -> number(text(d, "peak-" + series)) > 0);
    }
    assertThat(text(page, "value-latency")).matches("(–|[0-9.]+ ms)");
    assertThat(linePixels(page, "executions"))
        .as("line pixels on the executions chart")
        .isPositive();

    lookUp(page, scope, key());
    wait.until(d -> text(d, "lookup-result").contains("No live record"));
    lookUp(page, scope, stuck);
    wait.until(d -> text(d, "lookup-result").contains("IN_PROGRESS"));
    assertThat(text(page, "lookup-result")).contains(stuck, scope, "leaseRemainingMillis");

    WebElement release = listInFlightAndFindReleaseButton(page, wait, gw, stuck);
    release.click();
    Alert confirm = wait.until(ExpectedConditions.alertIsPresent());
    assertThat(confirm.getText()).contains(stuck, scope);
    confirm.accept();
    wait.until(d -> text(d, "action-result").contains("released"));

    assertThat(text(page, "action-result"))
        .isEqualTo(
            "Force-release of \""
                + stuck
                + "\" in \""
                + scope
                + "\": released: the next retry with this key runs afresh");
    assertThat(gw.gateway.store().get(RecordId.of(new Scope(scope), IdempotencyKey.of(stuck))))
        .isEmpty();
    assertNoTokenInAnyAddressNorPolicyViolationOrScriptError(page);

    // A few more samples, so that the screenshot shows lines rather than dots.
    wait.until(d -> number(text(d, "sampled").replaceAll(".*\\(", "")) >= 5);
    chromium.screenshot(SCREENSHOT);
    byte[] png = Files.readAllBytes(SCREENSHOT);
    assertThat(png).hasSizeGreaterThan(10_000).startsWith(0x89, 'P', 'N', 'G');
  }

  /** The stuck key's release button, in the in-flight table the page lists from the admin API. */
  private static WebElement listInFlightAndFindReleaseButton(
      ChromeDriver page, WebDriverWait wait, TestGateway gw, String stuck) {
    WebElement older = page.findElement(By.id("inflight-older"));
    older.clear();
    older.sendKeys("0");
    page.findElement(By.id("inflight-refresh")).click();
    By row = By.cssSelector("#inflight-result tr[data-key='" + stuck + "'] button.release");
    return wait.until(ExpectedConditions.elementToBeClickable(row));
  }

  private static void assertNoTokenInAnyAddressNorPolicyViolationOrScriptError(ChromeDriver page) {
    @SuppressWarnings("unchecked")
    List<String> addresses =
        (List<String>)
            page.executeScript(
                "return performance.getEntriesByType('resource').map(e => e.name)"
                    + ".concat([location.href]);");
    assertThat(addresses)
        .anyMatch(a -> a.contains("/metrics"))
        .anyMatch(a -> a.contains("/admin/records"))
        .noneMatch(a -> a.contains(TOKEN));
    List<String> console =
        page.manage().logs().get(LogType.BROWSER).getAll().stream()
            .map(LogEntry::getMessage)
            .toList();
    assertThat(console)
        .noneMatch(m -> m.contains("Content Security Policy"))
        .noneMatch(m -> m.contains("Uncaught"));
  }

  /** How many pixels of a chart's canvas are the opaque blue of its line (#2563eb). */
  private static long linePixels(ChromeDriver page, String series) {
    return (Long)
        page.executeScript(
            "const c = document.querySelector('#chart-' + arguments[0] + ' canvas');"
                + " const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;"
                + " let n = 0;"
                + " for (let i = 0; i < d.length; i += 4) {"
                + "   if (d[i] < 100 && d[i + 2] > 200 && d[i + 3] > 200) n++;"
                + " }"
                + " return n;",
            series);
  }

  private static void lookUp(WebDriver page, String scope, String key) {
    type(page, "lookup-scope", scope);
    type(page, "lookup-key", key);
    page.findElement(By.id("lookup")).click();
  }

  private static void type(WebDriver page, String id, String text) {
    WebElement input = page.findElement(By.id(id));
    input.clear();
    input.sendKeys(text);
  }

  private static String text(WebDriver page, String id) {
    return page.findElement(By.id(id)).getText();
  }

  /** The number a chart label starts with ("0.50 /s", "1.3 ms"); 0 for "–". */
  private static double number(String label) {
    Matcher m = Pattern.compile("^[0-9]+(\\.[0-9]+)?").matcher(label);
    return m.find() ? Double.parseDouble(m.group()) : 0;
  }

  private static String resource(String name) throws IOException {
    try (InputStream in = ConsoleServlet.class.getResourceAsStream("console/" + name)) {
      assertThat(in).as(name).isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
