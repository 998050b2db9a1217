package dev.once.spring;

import dev.once.IdempotencyKey;
import dev.once.Scope;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordAdmin;
import dev.once.store.RecordId;
import java.security.Principal;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.SecurityContext;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
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
 *   <li>{@code DELETE /actuator/once}: deletes expired records now, bounded per call.
 * </ul>
 *
 * Every write is written to the {@code dev.once.audit} log with the caller's principal.
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

  @WriteOperation
  public Map<String, Object> release(String scope, String key, SecurityContext caller) {
    RecordId id = recordId(scope, key);
    RecordAdmin.Release release = records.forceRelease(id);
    String result = release.result().name().toLowerCase(Locale.ROOT).replace('_', '-');
    audit.warn(
        "actuator action=release scope={} key={} token={} principal={} result={}",
        id.scope().value(),
        id.key().value(),
        release.token() == null ? "-" : release.token(),
        nameOf(caller),
        result);
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("result", result);
    out.put("token", release.token());
    return out;
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
