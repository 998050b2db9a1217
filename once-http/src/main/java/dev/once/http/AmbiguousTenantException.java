package dev.once.http;

/**
 * Thrown by a {@link ScopeResolver} when a request names more than one tenant (two tenant headers
 * with different values): {@link HttpIdempotency} answers it 400 {@code tenant-ambiguous} rather than
 * guess whose records the key belongs to (DESIGN §4).
 */
public final class AmbiguousTenantException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  public AmbiguousTenantException(String message) {
    super(message);
  }
}
