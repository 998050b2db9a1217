package dev.once.chaos;

/** Where a failover run's operations write their effect, relative to the idempotency record. */
public enum EffectMode {

  /**
   * In its own transaction, before the completion is recorded: like a call to another system. A
   * crash between the two leaves an effect whose key is still in progress, and the retry after the
   * lease runs it again, whatever the replication.
   */
  SEPARATE,

  /**
   * In the same transaction as the claim and the completion ({@code
   * PostgresStore.transactional()}): the effect and its record commit, or are lost, together.
   */
  TRANSACTIONAL
}
