package dev.once.http;

import dev.once.Scope;

/**
 * Finds who owns a request's key: the tenant part of its scope. The route is added by {@link
 * HttpIdempotency}. Secrets (API keys, bearer tokens) are stored only as hashes.
 */
@FunctionalInterface
public interface ScopeResolver {

  /**
   * The tenant part of the scope; {@code "-"} when the request carries none.
   *
   * @throws TenantException if the request names more than one tenant, or none where one is
   *     required
   */
  String tenantOf(IncomingRequest request);

  /**
   * The SHA-256 of a header's value (e.g. {@code Api-Key} or {@code Authorization}): requests with
   * different credentials never share records, and the credential is never stored. The header sent
   * twice with different values is ambiguous; twice with one value is that value.
   */
  static ScopeResolver header(String name) {
    return header(name, false);
  }

  /**
   * As {@link #header(String)}, but a request without the header is refused: every key has an
   * owner.
   */
  static ScopeResolver requiredHeader(String name) {
    return header(name, true);
  }

  private static ScopeResolver header(String name, boolean required) {
    if (name == null || name.isBlank()) {
      throw new IllegalArgumentException("scope header name must not be blank");
    }
    return request -> {
      java.util.List<String> values = request.headers().all(name);
      if (values.isEmpty()) {
        if (required) {
          throw TenantException.missing(
              "The request has no " + name + " header; every key needs its tenant.");
        }
        return "-";
      }
      if (values.stream().distinct().count() > 1) {
        throw TenantException.ambiguous(
            "The request has "
                + values.size()
                + " "
                + name
                + " headers with different values; send one.");
      }
      return Scope.hash(values.get(0));
    };
  }

  /** The authenticated principal's name, as the framework reports it. */
  static ScopeResolver principal() {
    return request -> request.principal() == null ? "-" : "principal:" + request.principal();
  }

  /**
   * As {@link #principal()}, but a keyed request from no authenticated principal is refused: every
   * key has an owner.
   */
  static ScopeResolver requiredPrincipal() {
    return request -> {
      if (request.principal() == null) {
        throw TenantException.missing(
            "The request is not authenticated; every key needs its tenant.");
      }
      return "principal:" + request.principal();
    };
  }

  /** One namespace for everybody: only for single-tenant services. */
  static ScopeResolver global() {
    return request -> "-";
  }
}
