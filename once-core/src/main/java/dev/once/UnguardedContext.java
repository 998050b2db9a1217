package dev.once;

import java.util.Optional;

/** The context of a fail-open run: there is no lease, so nothing to checkpoint or lose. */
record UnguardedContext(Scope scope, IdempotencyKey key) implements ExecutionContext {

  @Override
  public long token() {
    return 0;
  }

  @Override
  public boolean stolen() {
    return false;
  }

  @Override
  public Optional<byte[]> recoveryPoint() {
    return Optional.empty();
  }

  @Override
  public void checkpoint(byte[] recoveryPoint) {
    // No store to save it in: the run is unguarded by policy.
  }

  @Override
  public boolean leaseLost() {
    return false;
  }
}
