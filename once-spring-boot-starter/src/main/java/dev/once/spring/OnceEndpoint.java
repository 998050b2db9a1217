package dev.once.spring;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.http.Durations;
import dev.once.http.Headers;
import dev.once.http.HttpIdempotency;
import dev.once.http.IncomingRequest;
import dev.once.http.TenantException;
import dev.once.store.IdempotencyStore;
import dev.once.store.InFlight;
import dev.once.store.RecordAdmin;
import dev.once.store.RecordId;
import java.security.Principal;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code once} Actuator endpoint: the gateway's admin operations for an application that embeds
 * Once. Not exposed over HTTP unless {@code management.endpoints.web.exposure.include} names it;
 * put it behind the application's security like any write endpoint.
 *
 * <ul>
 *   <li>{@code GET /actuator/once?scope=S&key=K}: a record's metadata, never its stored result (404
 *       if there is none); or, for a record of an HTTP request, {@code
 *       ?tenant=T&method=POST&path=/api/orders&key=K} with the tenant as the client sent it (its
 *       {@code Api-Key}, say): the scope is derived as the filter derives it;
 *   <li>{@code POST /actuator/once} with {@code {"scope":S,"key":K}} (or {@code tenant}, {@code
 *       method}, {@code path} in place of {@code scope}): force-releases a key stuck in progress,
 *       fenced by its token;
 *   <li>{@code GET /actuator/once/in-flight?olderThan=30s&limit=100}: in-progress records running
 *       at least {@code olderThan} since their first claim, oldest first, at most {@code limit} (1
 *       to 1000; both required), metadata only, with {@code complete} saying whether the store
 *       looked at every candidate: the same body as the gateway's {@code /admin/records/in-flight};
 *   <li>{@code DELETE /actuator/once}: deletes expired records now, bounded per call.
 * </ul>
 *
 * Every write, and every listing (it shows every tenant's keys), is written to the {@code
 * dev.once.audit} log with the caller's principal.
 */
@Endpoint(id = "once")
public class OnceEndpoint {

  private static final Logger audit = LoggerFactory.getLogger("dev.once.audit");

  /** One call deletes at most this many batches; the answer says whether more may be left. */
  private static final int PURGE_BATCHES = 100;

  private static final int PURGE_BATCH_SIZE = 1000;

  private final RecordAdmin records;
  private final Supplier<@Nullable HttpIdempotency> http;
  private final String tenantHeader;

  /**
   * @param http the HTTP layer whose routes and scope resolver derive a request's scope; null in an
   *     application that guards no HTTP requests
   * @param tenantHeader the header a tenant given by name is sent in ({@code once.scope.header})
   */
  OnceEndpoint(
      IdempotencyStore store, Supplier<@Nullable HttpIdempotency> http, String tenantHeader) {
    this.records = new RecordAdmin(store);
    this.http = http;
    this.tenantHeader = tenantHeader;
  }

  /**
   * The record's metadata; null, which Actuator answers with 404, if there is none. The record is
   * named by its scope as stored, or by the request that made it: tenant (optional), method
   * (default POST) and path. The optional parameters carry Spring's {@code @Nullable}, the mark
   * Boot 3's Actuator reads (Boot 4's reads any {@code @Nullable}); JSpecify's alone would leave
   * them required on Boot 3.
   */
  @ReadOperation
  public @Nullable Map<String, Object> record(
      @org.springframework.lang.Nullable String scope,
      @org.springframework.lang.Nullable String tenant,
      @org.springframework.lang.Nullable String method,
      @org.springframework.lang.Nullable String path,
      String key) {
    return records
        .lookup(recordId(scopeOf(scope, tenant, method, path), key))
        .map(RecordAdmin::describe)
        .orElse(null);
  }

  /**
   * The in-flight listing at {@code /actuator/once/in-flight}; null, which Actuator answers with
   * 404, for any other path below the endpoint. A malformed bound or limit is 400, its text not
   * echoed.
   */
  @ReadOperation
  public @Nullable Map<String, Object> listing(
      @Selector String view, String olderThan, String limit, SecurityContext caller) {
    if (!IN_FLIGHT.equals(view)) {
      return null;
    }
    Duration bound;
    int most;
    try {
      bound = Durations.parse(olderThan);
      most = Integer.parseInt(limit.trim());
      InFlight.check(bound, most);
    } catch (IllegalArgumentException e) { // NumberFormatException too
      String reason =
          "olderThan must be a duration (500ms, 30s, 5m, 24h, 7d or PT30S), not negative, and"
              + " limit a whole number from 1 to "
              + InFlight.MAX_LIMIT;
      throw new InvalidEndpointRequestException(reason, reason);
    }
    InFlight found = records.inFlight(bound, most);
    audit.info(
        "actuator action=in-flight olderThan={} limit={} principal={} count={} complete={}",
        Durations.format(bound),
        most,
        nameOf(caller),
        found.records().size(),
        found.complete());
    return RecordAdmin.describe(found);
  }

  private static final String IN_FLIGHT = "in-flight";

  @WriteOperation
  public Map<String, Object> release(
      @org.springframework.lang.Nullable String scope,
      @org.springframework.lang.Nullable String tenant,
      @org.springframework.lang.Nullable String method,
      @org.springframework.lang.Nullable String path,
      String key,
      SecurityContext caller) {
    RecordId id = recordId(scopeOf(scope, tenant, method, path), key);
    RecordAdmin.Release release = records.forceRelease(id);
    audit.warn(
        "actuator action=release scope={} key={} token={} principal={} result={}",
        id.scope().value(),
        id.key().value(),
        release.token() == null ? "-" : release.token(),
        nameOf(caller),
        release.resultName());
    return RecordAdmin.describe(release);
  }

  @DeleteOperation
  public Map<String, Object> purge(SecurityContext caller) {
    RecordAdmin.Purged purged = records.purgeExpired(PURGE_BATCH_SIZE, PURGE_BATCHES);
    audit.info(
        "actuator action=purge principal={} purged={} more={}",
        nameOf(caller),
        purged.purged(),
        purged.more());
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("purged", purged.purged());
    out.put("more", purged.more());
    return out;
  }

  /**
   * The stored scope: {@code scope} as given, or derived from a request with the tenant, method and
   * path given, through the routes and the scope resolver the filter uses (so a header tenant is
   * hashed and the route's pattern found as for the request itself). The tenant is sent both as the
   * {@code once.scope.header} header and as the principal's name, so it works whichever of them the
   * resolver reads.
   */
  private String scopeOf(
      @Nullable String scope,
      @Nullable String tenant,
      @Nullable String method,
      @Nullable String path) {
    if (path == null) {
      if (scope == null || tenant != null || method != null) {
        throw badRequest("name the record by scope, or by path (with tenant and method)");
      }
      return scope;
    }
    if (scope != null) {
      throw badRequest("name the record by scope or by path, not both");
    }
    HttpIdempotency requests = http.get();
    if (requests == null) {
      throw badRequest("this application guards no HTTP requests: name the record by scope");
    }
    IncomingRequest request =
        new IncomingRequest(
            method == null ? "POST" : method.trim().toUpperCase(Locale.ROOT),
            path,
            "",
            tenant == null ? Headers.EMPTY : Headers.of(tenantHeader, tenant),
            new byte[0],
            tenant);
    try {
      return requests.scopeOf(request).value();
    } catch (TenantException e) {
      throw badRequest(String.valueOf(e.getMessage())); // names the header, never a value
    } catch (IllegalArgumentException e) {
      throw badRequest("path or tenant is malformed");
    }
  }

  private static InvalidEndpointRequestException badRequest(String reason) {
    return new InvalidEndpointRequestException(reason, reason);
  }

  /** A malformed scope or key is the caller's mistake: 400, and its text is not echoed. */
  private static RecordId recordId(String scope, String key) {
    try {
      return RecordId.of(new Scope(scope), IdempotencyKey.of(key));
    } catch (IllegalArgumentException e) {
      throw new InvalidEndpointRequestException(
          "scope or key is malformed", "scope or key is malformed");
    }
  }

  private static String nameOf(SecurityContext caller) {
    Principal p = caller.getPrincipal();
    return p == null ? "-" : p.getName();
  }
}
