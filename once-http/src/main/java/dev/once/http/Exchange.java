package dev.once.http;

import dev.once.IdempotencyKey;
import dev.once.Lease;
import dev.once.Outcome;
import dev.once.Recording;
import dev.once.Scope;
import java.util.Locale;
import java.util.Set;

/**
 * A request this caller won the lease for. Finish it exactly once: {@link #record} with the
 * handler's response, {@link #recordUnavailable()} if the response cannot be captured,
 * {@link #fail()} if the handler threw, or {@link #abandon()} if the outcome is unknown.
 */
public final class Exchange {

  /** Never stored nor replayed: hop-by-hop fields, and those a replay must recompute or must not repeat. */
  static final Set<String> NEVER_REPLAYED = Set.of(
      "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection",
      "te", "trailer", "trailers", "transfer-encoding", "upgrade",
      "date", "content-length", "set-cookie", "set-cookie2", "idempotent-replayed");

  private final Lease lease;
  private final RoutePolicy policy;

  Exchange(Lease lease, RoutePolicy policy) {
    this.lease = lease;
    this.policy = policy;
  }

  public IdempotencyKey key() {
    return lease.key();
  }

  public Scope scope() {
    return lease.scope();
  }

  /** The lease's fencing token; forward it to systems that can reject stale writers. */
  public long token() {
    return lease.token();
  }

  /**
   * Classifies the handler's response and records it: completed and final responses are stored
   * (without hop-by-hop and deny-listed headers) and replayed; transient ones release the key.
   */
  public Recording record(StoredResponse response) {
    Outcome outcome = policy.classifier().classify(response);
    if (outcome == Outcome.TRANSIENT) {
      return lease.release();
    }
    StoredResponse kept = new StoredResponse(response.status(), replayable(response.headers()), response.body());
    byte[] encoded = StoredResponse.CODEC.encode(kept);
    return outcome == Outcome.COMPLETED ? lease.complete(encoded) : lease.failFinal(encoded);
  }

  /** The handler finished but its response cannot be stored (streamed): retries get 409, never a re-run. */
  public Recording recordUnavailable() {
    return lease.completeWithoutResult();
  }

  /**
   * The handler finished with this status but its response was streamed (or outgrew the cap) and
   * cannot be stored: a transient status still releases the key, any other counts as done, so
   * retries get 409 and never a re-run.
   */
  public Recording recordUnavailable(int status) {
    Outcome outcome = policy.classifier().classify(new StoredResponse(status, Headers.EMPTY, null));
    return outcome == Outcome.TRANSIENT ? lease.release() : lease.completeWithoutResult();
  }

  /** The handler threw: the key is released so a retry runs afresh. */
  public Recording fail() {
    return lease.release();
  }

  /**
   * The outcome is unknown (the request may have reached an upstream): the key stays in progress
   * until its lease ends, so a retry cannot duplicate an effect that did happen.
   */
  public void abandon() {
    lease.abandon();
  }

  private Headers replayable(Headers headers) {
    Set<String> named = connectionNamed(headers);
    return headers.without(name -> NEVER_REPLAYED.contains(name)
        || policy.replayHeaderDenylist().contains(name) || named.contains(name));
  }

  /** Fields named in {@code Connection} are hop-by-hop too (RFC 9110 §7.6.1). */
  private static Set<String> connectionNamed(Headers headers) {
    java.util.List<String> values = headers.all("Connection");
    if (values.isEmpty()) {
      return Set.of();
    }
    Set<String> names = new java.util.HashSet<>();
    for (String v : values) {
      for (String token : v.split(",")) {
        names.add(token.trim().toLowerCase(Locale.ROOT));
      }
    }
    return names;
  }
}
