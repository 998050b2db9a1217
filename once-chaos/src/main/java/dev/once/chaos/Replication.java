package dev.once.chaos;

/**
 * How a {@link PostgresCluster}'s primary waits for its streaming replica before acknowledging a
 * commit.
 */
public enum Replication {

  /**
   * {@code synchronous_commit = on}, no synchronous standby: a commit is acknowledged once flushed
   * locally.
   */
  ASYNC,

  /**
   * {@code synchronous_standby_names = '*'} and {@code synchronous_commit = remote_apply}: a commit
   * is acknowledged once the replica has applied it, so a promoted replica has everything
   * acknowledged.
   */
  SYNC_REMOTE_APPLY
}
