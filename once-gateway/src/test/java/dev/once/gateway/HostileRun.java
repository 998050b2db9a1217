package dev.once.gateway;

import dev.once.gateway.HostileClients.Answer;
import dev.once.gateway.HostileClients.Seen;
import dev.once.gateway.HostilePlan.ClientAct;
import dev.once.gateway.HostilePlan.UpstreamAct;
import dev.once.gateway.HostileUpstream.Effect;
import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * One seeded run of a {@link HostilePlan} over loopback sockets against an in-process gateway, and
 * the rules checked after it:
 *
 * <ol>
 *   <li><b>the ledger</b>: at most one upstream effect per key. A second effect is allowed only
 *       after one whose status may release the key (a transient status), or once the first
 *       attempt's lease may have ended: a run's attempts of one key start within 1.5 s, the lease
 *       is {@link #LEASE}, and a claim is never earlier than its attempt's start, so an effect
 *       before the first start plus the lease (less a second for clocks) came while the first lease
 *       held;
 *   <li><b>every client got an answer or a reset within its deadline</b>, and no final 1xx or
 *       status over 599; an answer that is no problem of the gateway's is its own upstream act's,
 *       status, coding and body byte for byte (never another request's);
 *   <li><b>nothing is held afterwards</b>: the buffer budget ({@code once_gateway_buffered_bytes})
 *       is back to zero and the in-flight listing holds no live lease (abandoned ones run out
 *       within {@link #LEASE}; one heartbeated for ever never does); and the gateway still answers.
 * </ol>
 */
final class HostileRun {

  static final Duration LEASE = Duration.ofSeconds(5);
  static final long UPSTREAM_TIMEOUT_MILLIS = 1_500;
  static final long CLIENT_DEADLINE_MILLIS = 12_000;
  static final String TOKEN = "admin-token-for-hostile-runs-0123";

  private static final String ROUTES =
      """
      upstream-timeout: %dms
      access-log: false
      defaults:
        lease: %ds
      routes:
        - pattern: /hostile/**
          max-request-bytes: 64KiB
          max-response-bytes: 128KiB
      """
          .formatted(UPSTREAM_TIMEOUT_MILLIS, LEASE.toSeconds());

  private HostileRun() {}

  /** The flags a hostile run's gateway starts with, besides the store's. */
  private static List<String> flags(Path dir, String upstream) {
    return List.of(
        "--config", dir.resolve("gateway.yaml").toString(),
        "--bind", "127.0.0.1",
        "--port", "0",
        "--management-port", "0",
        "--upstream", upstream,
        "--data-dir", dir.resolve("data").toString(),
        "--durability", "process-crash",
        "--request-body-timeout", "1s",
        "--max-buffered-bytes", "1MiB",
        "--upstream-max-connections", "8",
        "--admin-token", TOKEN);
  }

  /** Runs {@code plan} against a gateway on the store the flags name; returns what broke a rule. */
  static List<String> run(HostilePlan plan, String... storeFlags) throws Exception {
    Path dir = Files.createTempDirectory("once-hostile-");
    try (HostileUpstream upstream = new HostileUpstream(plan.acts())) {
      Files.writeString(dir.resolve("gateway.yaml"), ROUTES);
      List<String> args = new ArrayList<>(flags(dir, upstream.url()));
      args.addAll(Arrays.asList(storeFlags));
      GatewayConfig config =
          Cli.configure(Cli.parse(args.toArray(String[]::new)), TestCore.env()).build();
      try (Gateway gateway = Gateway.start(config)) {
        List<Seen> seen = drive(plan, gateway.port());
        List<String> broken = new ArrayList<>();
        checkClients(plan, seen, broken);
        checkLedger(plan, seen, upstream.effects(), broken);
        checkNothingHeld(gateway, broken);
        return broken;
      }
    } finally {
      TestGateway.delete(dir);
    }
  }

  private static List<Seen> drive(HostilePlan plan, int port) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(64);
    try {
      long t0 = System.nanoTime();
      List<Future<Seen>> running = new ArrayList<>();
      for (ClientAct act : plan.clients()) {
        running.add(
            pool.submit(
                () -> {
                  long wait = act.startMillis() - (System.nanoTime() - t0) / 1_000_000;
                  if (wait > 0) {
                    Thread.sleep(wait);
                  }
                  return HostileClients.run(port, act, CLIENT_DEADLINE_MILLIS);
                }));
      }
      List<Seen> seen = new ArrayList<>();
      for (Future<Seen> f : running) {
        seen.add(f.get(CLIENT_DEADLINE_MILLIS * 4, TimeUnit.MILLISECONDS));
      }
      return seen;
    } finally {
      pool.shutdownNow();
    }
  }

  private static void checkClients(HostilePlan plan, List<Seen> seen, List<String> broken) {
    for (Seen s : seen) {
      ClientAct act = s.act();
      if (s.hung()) {
        broken.add(
            "client " + act + " got neither an answer nor a reset in time; saw " + s.answers());
      }
      for (int i = 0; i < s.answers().size(); i++) {
        Answer a = s.answers().get(i);
        UpstreamAct own = plan.acts().get(i == 0 ? act.act() : act.pipelinedAct());
        checkAnswer(act, own, a, broken);
      }
    }
  }

  private static void checkAnswer(ClientAct act, UpstreamAct own, Answer a, List<String> broken) {
    String who =
        "client " + act.id() + " (" + act.kind() + ", act " + own.id() + ": " + describe(own) + ")";
    if (a.status() < 200 || a.status() > 599) {
      broken.add(who + " got status " + a.status());
      return;
    }
    if (a.problem()) {
      return;
    }
    String from = a.headers().get("x-act");
    if (!String.valueOf(own.id()).equals(from)) {
      broken.add(who + " got " + a.status() + " from act " + from + ", not its own");
      return;
    }
    if (a.status() != own.status()) {
      broken.add(who + " got status " + a.status() + ", the upstream said " + own.status());
    }
    if (own.coding() != HostilePlan.Coding.IDENTITY
        && !"gzip".equals(a.headers().get("content-encoding"))) {
      broken.add(who + " got its gzip body without Content-Encoding");
    }
    boolean bodied = a.status() != 204 && a.status() != 304 && !act.method().equals("HEAD");
    if (a.whole() && bodied && !own.delivers(a.body())) {
      broken.add(
          who
              + " got a body of "
              + a.body().length
              + " bytes, the upstream sent "
              + own.wire().length);
    }
  }

  private static void checkLedger(
      HostilePlan plan, List<Seen> seen, List<Effect> effects, List<String> broken) {
    Map<String, Long> firstStart = new HashMap<>();
    for (Seen s : seen) {
      if (s.act().key() != null) {
        firstStart.merge(s.act().key(), s.startNanos(), Math::min);
      }
    }
    Map<String, List<Effect>> byKey = new HashMap<>();
    for (Effect e : effects) {
      if (e.key() != null) {
        byKey.computeIfAbsent(e.key(), k -> new ArrayList<>()).add(e);
      }
    }
    long leaseNanos = LEASE.minusSeconds(1).toNanos();
    byKey.forEach(
        (key, list) -> {
          if (key.startsWith("bad key")) {
            broken.add("a malformed key reached the upstream: " + key);
            return;
          }
          Long start = firstStart.get(key);
          if (start == null) {
            return; // a key on a pipelined GET, which no route covers
          }
          list.sort(Comparator.comparingLong(Effect::atNanos));
          boolean released = false;
          for (int i = 0; i < list.size(); i++) {
            Effect e = list.get(i);
            if (i > 0 && !released && e.atNanos() - start < leaseNanos) {
              broken.add(
                  "key "
                      + key
                      + " ran upstream "
                      + list.size()
                      + " times (act "
                      + e.act()
                      + ": "
                      + describe(plan.acts().get(e.act()))
                      + ")");
              return;
            }
            released |= plan.acts().get(e.act()).mayRelease();
          }
        });
  }

  static String describe(UpstreamAct a) {
    return a.status()
        + " "
        + a.interim()
        + " "
        + a.framing()
        + " "
        + a.coding()
        + " "
        + a.fields()
        + " cut "
        + a.cut()
        + " delay "
        + a.delay()
        + " "
        + a.delayMillis()
        + "ms body "
        + a.body().length
        + (a.readsBody() ? "" : " early");
  }

  private static void checkNothingHeld(Gateway gateway, List<String> broken) throws Exception {
    Client management = new Client(URI.create("http://127.0.0.1:" + gateway.managementPort()));
    if (!eventually(Duration.ofSeconds(15), () -> Client.bufferedBytes(management) == 0)) {
      broken.add(
          "the buffer budget holds " + Client.bufferedBytes(management) + " bytes after the run");
    }
    Duration settle = LEASE.plusSeconds(6);
    if (!eventually(settle, () -> liveLeases(management) == 0)) {
      broken.add(
          liveLeases(management) + " in-flight records still hold a live lease after the run");
    }
    HttpResponse<String> health = management.get("/health");
    if (health.statusCode() != 200) {
      broken.add("/health answers " + health.statusCode() + " after the run");
    }
  }

  private static final Pattern LEASE_REMAINING =
      Pattern.compile("\"leaseRemainingMillis\"\\s*:\\s*(-?\\d+)");

  /** In-progress records whose lease has not run out: work the gateway still holds. */
  private static int liveLeases(Client management) throws Exception {
    HttpResponse<String> listing =
        management.send(
            HttpRequest.newBuilder(
                    URI.create(
                        "http://placeholder/admin/records/in-flight?older-than=0s&limit=1000"))
                .header("Authorization", "Bearer " + TOKEN)
                .GET());
    if (listing.statusCode() != 200) {
      throw new IllegalStateException("in-flight listing: " + listing.statusCode());
    }
    Matcher m = LEASE_REMAINING.matcher(listing.body());
    int live = 0;
    while (m.find()) {
      if (Long.parseLong(m.group(1)) > 0) {
        live++;
      }
    }
    return live;
  }

  @FunctionalInterface
  private interface Check {
    boolean holds() throws Exception;
  }

  private static boolean eventually(Duration within, Check check) throws Exception {
    long end = System.nanoTime() + within.toNanos();
    while (true) {
      if (check.holds()) {
        return true;
      }
      if (System.nanoTime() > end) {
        return false;
      }
      Thread.sleep(100);
    }
  }
}
