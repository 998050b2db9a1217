package dev.once.messaging;

import dev.once.ExecutionContext;

/**
 * The effect of one message, run at most once per (scope, key). Return normally for success, throw
 * {@link dev.once.FinalFailure} for a deterministic failure (recorded, dead-lettered), or throw
 * anything else for a transient one (the message is redelivered), unless a classifier says
 * otherwise.
 *
 * @param <M> the broker's message type
 */
@FunctionalInterface
public interface MessageHandler<M> {

  /**
   * Does the work. {@code context} carries the fencing token, which writes to other systems can
   * carry, and whether this run took over from a consumer that died ({@link
   * ExecutionContext#stolen()}).
   */
  void handle(M message, ExecutionContext context) throws Exception;
}
