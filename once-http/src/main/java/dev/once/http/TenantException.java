package dev.once.http;

import java.util.Objects;

/**
 * Thrown by a {@link ScopeResolver} that cannot tell whose key a request carries: it names two
 * tenants ({@link ProblemType#TENANT_AMBIGUOUS}), or none where one is required ({@link
 * ProblemType#TENANT_MISSING}). {@link HttpIdempotency} answers it with that 400 problem rather
 * than guess (DESIGN §4); nothing is stored.
 */
public final class TenantException extends IllegalArgumentException {

  private static final long serialVersionUID = 1L;

  private final ProblemType problem;

  private TenantException(ProblemType problem, String message) {
    super(message);
    this.problem = Objects.requireNonNull(problem, "problem");
  }

  /** Two different tenants in one request. */
  public static TenantException ambiguous(String message) {
    return new TenantException(ProblemType.TENANT_AMBIGUOUS, message);
  }

  /** No tenant where the resolver requires one. */
  public static TenantException missing(String message) {
    return new TenantException(ProblemType.TENANT_MISSING, message);
  }

  /** The problem the request is answered with. */
  public ProblemType problem() {
    return problem;
  }
}
