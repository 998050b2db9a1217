package dev.once.spring;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.http.Durations;
import dev.once.store.IdempotencyStore;
import dev.once.store.InFlight;
import dev.once.store.RecordAdmin;
import dev.once.store.RecordId;
import java.security.Principal;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
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
 *       if there is none);
 *   <li>{@code POST /actuator/once} with {@code {"scope":S,"key":K}}: force-releases a key stuck in
 *       progress, fenced by its token;
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

  OnceEndpoint(IdempotencyStore store) {
    this.records = new RecordAdmin(store);
  }

  /** The record's metadata; null, which Actuator answers with 404, if there is none. */
  @ReadOperation
  public @Nullable Map<String, Object> record(String scope, String key) {
    return records.lookup(recordId(scope, key)).map(RecordAdmin::describe).orElse(null);
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
  public Map<String, Object> release(String scope, String key, SecurityContext caller) {
    RecordId id = recordId(scope, key);
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
