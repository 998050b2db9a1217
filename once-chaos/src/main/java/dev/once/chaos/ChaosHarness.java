package dev.once.chaos;

import dev.once.client.OnceHttpClient;
import dev.once.client.OnceResponse;
import dev.once.client.UuidV7;
import dev.once.tck.FaultProxy;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The chaos harness: N concurrent clients ({@link OnceHttpClient}, keyed retries) make payments
 * through a {@link Target} — the gateway in front of a ledger upstream, or the payments example in
 * transactional mode — through a {@link FaultProxy} on loopback, while the harness drops responses
 * after the server processed them, lets slow requests time out at the client, SIGKILLs and restarts
 * the server process, and SIGKILLs and restarts the store. Then every operation is retried once
 * more with its key, and the ledger is audited: see {@link AuditReport}.
 *
 * <pre>
 * java -jar once-chaos.jar --target gateway --store embedded|postgres|redis [--upstream chained|naive]
 * java -jar once-chaos.jar --target payments --payments-jar examples/payments/target/once-payments.jar
 *     [--operations 1000] [--clients 8] [--kills 2] [--store-restarts 1] [--drop-percent 5]
 *     [--slow-percent 2] [--duplicates 1] [--lease-ms 2000] [--seed 1]
 * </pre>
 *
 * <p>Prints the table and exits 0 if the audit passed, 1 if it found a duplicate or missing effect,
 * a lost record, a stuck key or an unexplained second delivery, 2 for a bad command line.
 */
public final class ChaosHarness {

  private static final Logger log = LoggerFactory.getLogger(ChaosHarness.class);

  /**
   * The answer's identity: the ledger upstream's charge {@code id}, the payments example's {@code
   * payment_id}.
   */
  private static final Pattern ID = Pattern.compile("\"(?:id|payment_id)\"\\s*:\\s*\"([^\"]+)\"");

  /**
   * A crash can abandon a lease on a request that reached the upstream up to this long before it.
   */
  private static final long CRASH_SLACK_NANOS = TimeUnit.SECONDS.toNanos(5);

  /** Findings about single operations logged in full; the table counts them all. */
  private static final int MAX_LOGGED = 20;

  /** The most clients that send one operation at once. */
  static final int MAX_DUPLICATES = 8;

  private final Settings settings;

  /**
   * What to run.
   *
   * @param target {@code gateway} or {@code payments}
   * @param store the gateway's store (the payments example always runs on PostgreSQL)
   * @param upstream the ledger behind the gateway
   * @param operations logical operations, 1–1,000,000
   * @param clients concurrent clients, 1–256
   * @param kills SIGKILLs of the server during the load, 0–100
   * @param storeRestarts SIGKILLs of the store during the load, 0–100 (0 for the embedded store)
   * @param dropPercent percent of operations whose response is dropped once, 0–100
   * @param slowPercent percent of operations whose upstream is slower than the lease, 0–100
   * @param duplicates how many clients send each operation at the same moment, with its key, 1–8:
   *     concurrent duplicates, which a store that gathers claims into batches must tell apart
   * @param lease the gateway's lease
   * @param gatewayMain the gateway's main class
   * @param jvmOptions extra options of the server JVMs
   * @param paymentsJar the payments example's jar
   * @param seed of the fault schedule
   */
  public record Settings(
      String target,
      GatewayTarget.Store store,
      LedgerUpstream.Mode upstream,
      int operations,
      int clients,
      int kills,
      int storeRestarts,
      int dropPercent,
      int slowPercent,
      int duplicates,
      Duration lease,
      String gatewayMain,
      List<String> jvmOptions,
      Path paymentsJar,
      long seed) {

    public Settings {
      if (!"gateway".equals(target) && !"payments".equals(target)) {
        throw new IllegalArgumentException("target must be gateway or payments, was " + target);
      }
      requireRange("operations", operations, 1, 1_000_000);
      requireRange("clients", clients, 1, 256);
      requireRange("kills", kills, 0, 100);
      requireRange("storeRestarts", storeRestarts, 0, 100);
      requireRange("dropPercent", dropPercent, 0, 100);
      requireRange("slowPercent", slowPercent, 0, 100);
      requireRange("duplicates", duplicates, 1, MAX_DUPLICATES);
      if (lease == null || lease.toMillis() < 500 || lease.toMillis() > 600_000) {
        throw new IllegalArgumentException("lease must be between 500 ms and 10 min, was " + lease);
      }
      jvmOptions = List.copyOf(jvmOptions);
      if ("gateway".equals(target) && store == GatewayTarget.Store.EMBEDDED && storeRestarts > 0) {
        throw new IllegalStateException(
            "storeRestarts ("
                + storeRestarts
                + ") needs a store process:"
                + " the embedded store lives in the gateway (its restarts are the kills)");
      }
    }

    private static void requireRange(String name, int value, int min, int max) {
      if (value < min || value > max) {
        throw new IllegalArgumentException(
            name + " must be between " + min + " and " + max + ", was " + value);
      }
    }
  }

  public ChaosHarness(Settings settings) {
    this.settings = settings;
  }

  /**
   * Parses the command line, runs, prints the table; returns the exit status (0 pass, 1 fail, 2
   * usage).
   */
  public static int status(String[] args) {
    Settings settings;
    try {
      settings = parse(args);
    } catch (IllegalArgumentException | IllegalStateException e) {
      System.err.println("once-chaos: " + e.getMessage());
      return 2;
    }
    AuditReport report = new ChaosHarness(settings).run();
    System.out.println(AuditReport.header());
    System.out.println(report.row());
    return report.passed() ? 0 : 1;
  }

  public static void main(String[] args) {
    System.exit(status(args));
  }

  static Settings parse(String[] args) {
    Options o =
        Options.parse(
            args,
            Map.ofEntries(
                Map.entry("target", "gateway"),
                Map.entry("store", "embedded"),
                Map.entry("upstream", "chained"),
                Map.entry("operations", "1000"),
                Map.entry("clients", "8"),
                Map.entry("kills", "2"),
                Map.entry("store-restarts", "0"),
                Map.entry("drop-percent", "5"),
                Map.entry("slow-percent", "2"),
                Map.entry("duplicates", "1"),
                Map.entry("lease-ms", "2000"),
                Map.entry("gateway-main", "dev.once.gateway.Gateway"),
                Map.entry("jvm-options", ""),
                Map.entry(
                    "payments-jar",
                    System.getProperty(
                        "once.chaos.paymentsJar", "examples/payments/target/once-payments.jar")),
                Map.entry("seed", "1")));
    return new Settings(
        o.get("target"),
        o.enumValue("store", GatewayTarget.Store.class),
        o.enumValue("upstream", LedgerUpstream.Mode.class),
        o.intValue("operations", 1, 1_000_000),
        o.intValue("clients", 1, 256),
        o.intValue("kills", 0, 100),
        o.intValue("store-restarts", 0, 100),
        o.intValue("drop-percent", 0, 100),
        o.intValue("slow-percent", 0, 100),
        o.intValue("duplicates", 1, MAX_DUPLICATES),
        Duration.ofMillis(o.intValue("lease-ms", 500, 600_000)),
        o.get("gateway-main"),
        o.get("jvm-options").isBlank()
            ? List.of()
            : Arrays.asList(o.get("jvm-options").trim().split("\\s+")),
        Path.of(o.get("payments-jar")),
        o.intValue("seed", 0, Integer.MAX_VALUE));
  }

  /** Runs the load with its faults, the final retry and the audit; always stops what it started. */
  public AuditReport run() {
    long started = System.nanoTime();
    try (Target target = startTarget();
        FaultProxy proxy = FaultProxy.to(target.port())) {
      Run run = new Run(target, proxy);
      run.load();
      run.settle();
      return run.audit(Duration.ofNanos(System.nanoTime() - started));
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  private Target startTarget() {
    return "gateway".equals(settings.target())
        ? GatewayTarget.start(
            settings.store(),
            settings.upstream(),
            settings.lease(),
            settings.gatewayMain(),
            settings.jvmOptions())
        : PaymentsTarget.start(settings.paymentsJar(), settings.jvmOptions());
  }

  /** What the client learnt of an operation. */
  private enum Seen {
    NOTHING,
    COMPLETED,
    REJECTED,
    UNKNOWN
  }

  /** One run's state: operations, what the clients saw, and the faults injected. */
  private final class Run {
    private final Target target;
    private final FaultProxy proxy;
    private final int n = settings.operations();
    private final String[] keys = new String[n];
    private final Seen[] seen = new Seen[n];
    private final String[] firstAnswer = new String[n];
    private final Seen[] settled = new Seen[n];
    private final boolean[] replayedSame = new boolean[n];
    private final boolean[] slow = new boolean[n];
    private final boolean[] drop = new boolean[n];
    private final AtomicInteger done = new AtomicInteger();

    /** The threads that send the concurrent duplicates, bounded by clients times duplicates. */
    private final ExecutorService duplicateSenders =
        Executors.newFixedThreadPool(settings.clients() * (settings.duplicates() - 1) + 1);

    private final AtomicLong retries = new AtomicLong();
    private final ConcurrentLinkedQueue<Long> crashes = new ConcurrentLinkedQueue<>();
    private int kills;
    private int storeRestarts;
    private int logged;

    Run(Target target, FaultProxy proxy) {
      this.target = target;
      this.proxy = proxy;
      Random random = new Random(settings.seed());
      for (int i = 0; i < n; i++) {
        keys[i] = UuidV7.next().toString();
        seen[i] = Seen.NOTHING;
        slow[i] = random.nextInt(100) < settings.slowPercent();
        drop[i] = random.nextInt(100) < settings.dropPercent();
      }
    }

    void load() throws InterruptedException {
      // Each attempt times out before a slow request can finish: the client retries while it is in
      // flight.
      OnceHttpClient client = client(Duration.ofMinutes(4));
      Duration attemptTimeout = target.lease().plus(Duration.ofSeconds(1));
      URI base = URI.create("http://127.0.0.1:" + proxy.port());
      ExecutorService clients =
          clients(
              i -> {
                if (drop[i]) {
                  proxy.dropResponses(1);
                }
                sendWithDuplicates(client, base, i, attemptTimeout);
                done.incrementAndGet();
              });
      injectFaults();
      awaitClients(clients, "the clients");
      duplicateSenders.shutdown();
      proxy.dropResponses(0);
    }

    /**
     * {@link Settings#clients()} threads that run {@code operation} for every operation number,
     * once each.
     */
    private ExecutorService clients(IntConsumer operation) {
      AtomicInteger next = new AtomicInteger();
      ExecutorService clients = Executors.newFixedThreadPool(settings.clients());
      for (int c = 0; c < settings.clients(); c++) {
        clients.execute(
            () -> {
              for (int i; (i = next.getAndIncrement()) < n; ) {
                operation.accept(i);
              }
            });
      }
      clients.shutdown();
      return clients;
    }

    private void awaitClients(ExecutorService clients, String what) throws InterruptedException {
      if (!clients.awaitTermination(30, TimeUnit.MINUTES)) {
        clients.shutdownNow();
        throw new IllegalStateException(what + " did not finish within 30 minutes");
      }
    }

    /** Spreads the kills and store restarts evenly over the load, by progress. */
    private void injectFaults() throws InterruptedException {
      List<double[]> schedule = new ArrayList<>();
      for (int k = 1; k <= settings.kills(); k++) {
        schedule.add(new double[] {(double) k / (settings.kills() + 1), 0});
      }
      for (int s = 1; s <= settings.storeRestarts(); s++) {
        schedule.add(new double[] {(s - 0.3) / settings.storeRestarts() * 0.8 + 0.1, 1});
      }
      schedule.sort((a, b) -> Double.compare(a[0], b[0]));
      long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(30);
      for (double[] fault : schedule) {
        while (done.get() < fault[0] * n && done.get() < n && System.nanoTime() < deadline) {
          Thread.sleep(20);
        }
        if (done.get() >= n) {
          break;
        }
        crashes.add(System.nanoTime());
        if (fault[1] == 0) {
          log.info(
              "{}: SIGKILL of the server after {} of {} operations", target.name(), done.get(), n);
          target.crashAndRestart();
          kills++;
        } else {
          log.info(
              "{}: SIGKILL of the store after {} of {} operations", target.name(), done.get(), n);
          target.crashAndRestartStore();
          storeRestarts++;
        }
        log.info("{}: back up", target.name());
      }
    }

    /**
     * Sends the operation, and {@code duplicates - 1} copies of it with its key at the same moment
     * from threads of their own, as clients that double-submit or retry early do. What the first
     * client learns is the operation's; the copies' answers are left to the audit, which counts the
     * effects the upstream saw whoever sent them.
     */
    private void sendWithDuplicates(OnceHttpClient client, URI base, int i, Duration timeout) {
      int copies = settings.duplicates() - 1;
      if (copies == 0) {
        send(client, base, i, timeout, false);
        return;
      }
      CountDownLatch go = new CountDownLatch(1);
      List<CompletableFuture<Void>> sent = new ArrayList<>(copies);
      for (int c = 0; c < copies; c++) {
        sent.add(
            CompletableFuture.runAsync(
                () -> {
                  try {
                    go.await();
                    client.send(
                        target.request(base, i, slow[i]).timeout(timeout).build(),
                        HttpResponse.BodyHandlers.ofString(),
                        keys[i]);
                  } catch (Exception e) {
                    if (e instanceof InterruptedException) {
                      Thread.currentThread().interrupt();
                    }
                    log.debug("a duplicate of operation {} failed: {}", i, String.valueOf(e));
                  }
                },
                duplicateSenders));
      }
      go.countDown();
      send(client, base, i, timeout, false);
      CompletableFuture.allOf(sent.toArray(CompletableFuture[]::new)).join();
    }

    private void send(
        OnceHttpClient client, URI base, int i, Duration attemptTimeout, boolean settling) {
      // The final retry sends the very same request (a different one would be a key reuse, 422).
      HttpRequest.Builder request = target.request(base, i, slow[i]).timeout(attemptTimeout);
      try {
        OnceResponse<String> r =
            client.send(request.build(), HttpResponse.BodyHandlers.ofString(), keys[i]);
        retries.addAndGet(r.attempts() - 1);
        Seen outcome = r.statusCode() / 100 == 2 ? Seen.COMPLETED : Seen.REJECTED;
        if (outcome == Seen.REJECTED) {
          log.warn("operation {} answered {}: {}", i, r.statusCode(), r.body());
        }
        if (!settling) {
          seen[i] = outcome;
          firstAnswer[i] = id(r.body());
        } else {
          settled[i] = outcome;
          replayedSame[i] =
              r.replayed() && firstAnswer[i] != null && firstAnswer[i].equals(id(r.body()));
        }
      } catch (Exception e) {
        if (e instanceof InterruptedException) {
          Thread.currentThread().interrupt();
        }
        if (!settling) {
          seen[i] = Seen.UNKNOWN;
        } else {
          settled[i] = Seen.UNKNOWN;
          log.warn("operation {} did not settle: {}", i, String.valueOf(e));
        }
      }
    }

    /**
     * The final retry: every operation once more with its key, straight to the server, no faults; a
     * slow operation is slow again only if it runs again.
     */
    void settle() throws InterruptedException {
      OnceHttpClient client = client(target.lease().multipliedBy(3).plus(Duration.ofMinutes(2)));
      URI base = URI.create("http://127.0.0.1:" + target.port());
      awaitClients(
          clients(i -> send(client, base, i, Duration.ofSeconds(30), true)), "the final retry");
    }

    AuditReport audit(Duration duration) {
      Map<Long, Target.Ledger> ledger = target.ledger();
      int completed = 0;
      int unknown = 0;
      int rejected = 0;
      int once = 0;
      int duplicates = 0;
      int missing = 0;
      int lost = 0;
      int stuck = 0;
      int afterCrash = 0;
      int unexplained = 0;
      List<Long> crashTimes = List.copyOf(crashes);
      for (int i = 0; i < n; i++) {
        switch (seen[i]) {
          case COMPLETED -> completed++;
          case REJECTED -> rejected++;
          default -> unknown++;
        }
        if (settled[i] == Seen.REJECTED) {
          rejected++;
        }
        Target.Ledger entry = ledger.getOrDefault((long) i + 1, new Target.Ledger(0, List.of()));
        if (settled[i] != Seen.COMPLETED) {
          stuck++;
        } else if (entry.effects() == 0) {
          missing++;
        }
        if (entry.effects() == 1) {
          once++;
        } else if (entry.effects() > 1) {
          duplicates++;
          if (logged++ < MAX_LOGGED) {
            log.warn("operation {} (key {}) had {} effects", i, keys[i], entry.effects());
          }
        }
        if (seen[i] == Seen.COMPLETED && !replayedSame[i]) {
          lost++;
          if (logged++ < MAX_LOGGED) {
            log.warn(
                "operation {} (key {}) completed, but its final retry was not a replay of {}",
                i,
                keys[i],
                firstAnswer[i]);
          }
        }
        List<Target.Delivery> d = entry.deliveries();
        for (int j = 1; j < d.size(); j++) {
          if (d.get(j).token() > d.get(j - 1).token()
              && crashBetween(crashTimes, d.get(j - 1).atNanos(), d.get(j).atNanos())) {
            afterCrash++;
          } else {
            unexplained++;
            if (logged++ < MAX_LOGGED) {
              log.warn(
                  "operation {} (key {}) reached the upstream again with token {} after token {}, with no crash"
                      + " in between",
                  i,
                  keys[i],
                  d.get(j).token(),
                  d.get(j - 1).token());
            }
          }
        }
      }
      int slowOps = 0;
      for (boolean s : slow) {
        slowOps += s ? 1 : 0;
      }
      return new AuditReport(
          target.name(),
          n,
          completed,
          unknown,
          rejected,
          once,
          duplicates,
          missing,
          lost,
          stuck,
          afterCrash,
          unexplained,
          kills,
          storeRestarts,
          proxy.droppedResponses(),
          "gateway".equals(settings.target()) ? slowOps : 0,
          retries.get(),
          duration);
    }

    private boolean crashBetween(List<Long> crashTimes, long first, long second) {
      return crashTimes.stream().anyMatch(t -> t >= first - CRASH_SLACK_NANOS && t <= second);
    }
  }

  private static OnceHttpClient client(Duration deadline) {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
    return OnceHttpClient.builder(http)
        .maxAttempts(100)
        .deadline(deadline)
        .initialBackoff(Duration.ofMillis(100))
        .maxBackoff(Duration.ofSeconds(2))
        .build();
  }

  private static @Nullable String id(@Nullable String body) {
    if (body == null) {
      return null;
    }
    Matcher m = ID.matcher(body);
    return m.find() ? m.group(1) : null;
  }
}
