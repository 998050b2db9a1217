package dev.once.gateway;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.http.Durations;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InFlight;
import dev.once.store.RecordAdmin;
import dev.once.store.RecordId;
import dev.once.store.StoreUnavailableException;
import dev.once.store.UnreadableRecordException;
import dev.once.store.jdbc.Purger;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.StringJoiner;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The admin API, on the management port and only when a token is configured:
 *
 * <ul>
 *   <li>{@code GET /admin/records?scope=S&key=K}: a record's metadata (state, token, lease, expiry,
 *       result size), never its stored body;
 *   <li>{@code POST /admin/records/release?scope=S&key=K}: force-releases a stuck in-progress key
 *       (for example one abandoned after an upstream timeout, once you know the upstream did
 *       nothing);
 *   <li>{@code GET /admin/records/in-flight?older-than=30s&limit=100}: in-progress records running
 *       at least {@code older-than} since their first claim, oldest first, at most {@code limit} (1
 *       to 1000), metadata only, and whether the store looked at every candidate ({@code
 *       complete});
 *   <li>{@code POST /admin/purge}: deletes expired records now, in bounded batches.
 * </ul>
 *
 * Every call needs {@code Authorization: Bearer <token>}; every call, allowed or not, is written to
 * the {@code dev.once.gateway.audit} log (never the token).
 */
final class AdminServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;
  private static final Logger audit = LoggerFactory.getLogger("dev.once.gateway.audit");

  private final transient RecordAdmin records;
  private final transient Purger purger;
  private final transient AdminToken token;

  AdminServlet(IdempotencyStore store, Purger purger, AdminToken token) {
    this.records = new RecordAdmin(store);
    this.purger = purger;
    this.token = token;
  }

  @Override
  protected void service(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    String action =
        request.getMethod() + " " + (request.getPathInfo() == null ? "/" : request.getPathInfo());
    String remote = request.getRemoteAddr();
    if (!token.matches(request.getHeader("Authorization"))) {
      audit.warn("admin action={} remote={} result=denied", Logs.safe(action), remote);
      response.setHeader("WWW-Authenticate", "Bearer");
      json(response, 401, "{\"error\":\"a valid bearer token is required\"}");
      return;
    }
    try {
      switch (action) {
        case "GET /records" -> get(request, response, remote);
        case "GET /records/in-flight" -> inFlight(request, response, remote);
        case "POST /records/release" -> release(request, response, remote);
        case "POST /purge" -> purge(response, remote);
        default -> {
          audit.info("admin action={} remote={} result=unknown-action", Logs.safe(action), remote);
          json(response, 404, "{\"error\":\"unknown admin action; see docs/gateway.md\"}");
        }
      }
    } catch (StoreUnavailableException e) {
      audit.warn("admin action={} remote={} result=store-unavailable", Logs.safe(action), remote);
      json(response, 503, "{\"error\":\"the store is unavailable\"}");
    } catch (UnreadableRecordException e) {
      // Its key was dropped from the keyring, or it was tampered with: say which, never its bytes.
      audit.warn(
          "admin action={} remote={} result=unreadable reason={} key-id={}",
          Logs.safe(action),
          remote,
          e.reason(),
          e.keyId() == null ? "-" : e.keyId());
      json(
          response,
          409,
          "{\"error\":\"the record is unreadable\",\"reason\":\"" + e.reason() + "\"}");
    }
  }

  private void get(HttpServletRequest request, HttpServletResponse response, String remote)
      throws IOException {
    Optional<RecordId> id = recordId(request, response, "get", remote);
    if (id.isEmpty()) {
      return;
    }
    Optional<IdempotencyRecord> found = records.lookup(id.get());
    audit.info(
        "admin action=get scope={} key={} remote={} result={}",
        Logs.safe(id.get().scope().value()),
        id.get().key().value(),
        remote,
        found.isPresent() ? "found" : "absent");
    if (found.isEmpty()) {
      json(response, 404, "{\"error\":\"no live record for this scope and key\"}");
      return;
    }
    json(response, 200, Json.of(RecordAdmin.describe(found.get())));
  }

  private void inFlight(HttpServletRequest request, HttpServletResponse response, String remote)
      throws IOException {
    String olderThan = request.getParameter("older-than");
    String limit = request.getParameter("limit");
    if (olderThan == null || limit == null) {
      audit.info("admin action=in-flight remote={} result=missing-older-than-or-limit", remote);
      json(response, 400, "{\"error\":\"pass older-than (such as 30s) and limit (1 to 1000)\"}");
      return;
    }
    Duration bound;
    int most;
    try {
      bound = Durations.parse(olderThan);
      most = Integer.parseInt(limit.trim());
      InFlight.check(bound, most);
    } catch (IllegalArgumentException e) { // NumberFormatException too
      // What was sent is not echoed: it may hold anything.
      audit.info("admin action=in-flight remote={} result=malformed-older-than-or-limit", remote);
      json(
          response,
          400,
          "{\"error\":\"older-than must be a duration (500ms, 30s, 5m, 24h, 7d or PT30S), not"
              + " negative, and limit a whole number from 1 to "
              + InFlight.MAX_LIMIT
              + "\"}");
      return;
    }
    InFlight found = records.inFlight(bound, most);
    audit.info(
        "admin action=in-flight older-than={} limit={} remote={} result=listed count={} complete={}",
        Durations.format(bound),
        most,
        remote,
        found.records().size(),
        found.complete());
    json(response, 200, Json.of(RecordAdmin.describe(found)));
  }

  private void release(HttpServletRequest request, HttpServletResponse response, String remote)
      throws IOException {
    Optional<RecordId> id = recordId(request, response, "release", remote);
    if (id.isEmpty()) {
      return;
    }
    RecordAdmin.Release release = records.forceRelease(id.get());
    audit.warn(
        "admin action=release scope={} key={} token={} remote={} result={}",
        Logs.safe(id.get().scope().value()),
        id.get().key().value(),
        release.token() == null ? "-" : release.token(),
        remote,
        release.resultName());
    int status =
        switch (release.result()) {
          case RELEASED -> 200;
          case ABSENT -> 404;
          case NOT_IN_PROGRESS, CHANGED_MEANWHILE -> 409;
        };
    json(response, status, Json.of(RecordAdmin.describe(release)));
  }

  private void purge(HttpServletResponse response, String remote) throws IOException {
    long purged;
    try {
      purged = purger.purgeNow();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      json(response, 503, "{\"error\":\"interrupted\"}");
      return;
    }
    audit.info("admin action=purge remote={} result=purged count={}", remote, purged);
    json(response, 200, "{\"purged\":" + purged + "}");
  }

  /**
   * The record the query names; a missing or malformed one is answered 400, and audited like every
   * call.
   */
  private static Optional<RecordId> recordId(
      HttpServletRequest request, HttpServletResponse response, String action, String remote)
      throws IOException {
    String scope = request.getParameter("scope");
    String key = request.getParameter("key");
    if (scope == null || key == null) {
      audit.info("admin action={} remote={} result=missing-scope-or-key", action, remote);
      json(response, 400, "{\"error\":\"pass scope and key as query parameters\"}");
      return Optional.empty();
    }
    try {
      return Optional.of(RecordId.of(new Scope(scope), IdempotencyKey.of(key)));
    } catch (IllegalArgumentException e) {
      // What was sent is not a valid scope or key, so it is not written out: it may hold anything.
      audit.warn("admin action={} remote={} result=malformed-scope-or-key", action, remote);
      json(response, 400, "{\"error\":\"scope or key is malformed\"}");
      return Optional.empty();
    }
  }

  /**
   * Descriptions as JSON: objects whose values are text, numbers, booleans, null, or lists and
   * objects of those ({@link RecordAdmin#describe} writes nothing else).
   */
  static final class Json {
    private Json() {}

    static String of(@Nullable Object value) {
      if (value instanceof String text) {
        return Logs.jsonString(text);
      }
      if (value instanceof Map<?, ?> fields) {
        StringJoiner out = new StringJoiner(",", "{", "}");
        fields.forEach((name, v) -> out.add(Logs.jsonString(String.valueOf(name)) + ":" + of(v)));
        return out.toString();
      }
      if (value instanceof List<?> items) {
        StringJoiner out = new StringJoiner(",", "[", "]");
        items.forEach(v -> out.add(of(v)));
        return out.toString();
      }
      return String.valueOf(value); // numbers, booleans, null
    }
  }

  private static void json(HttpServletResponse response, int status, String body)
      throws IOException {
    response.setStatus(status);
    response.setContentType("application/json");
    response.setHeader("Cache-Control", "no-store");
    response.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
  }
}
