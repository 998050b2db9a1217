package dev.once.store.redis;

import dev.once.store.StoreUnavailableException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.netty.util.Timeout;
import io.netty.util.Timer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the store's scripts: {@code EVALSHA}, and {@code EVAL} of the source when a node answers
 * {@code NOSCRIPT} (its script cache is empty after a restart, a failover or {@code SCRIPT FLUSH};
 * {@code EVAL} also caches the script there again). Every wait is bounded by the command timeout,
 * and every failure becomes a {@link StoreUnavailableException}.
 *
 * <p>A wait is not cut short by an interrupt. Once a command is sent, Redis may apply it whatever
 * the caller's thread does; giving up on the reply would report a write that landed (a completion,
 * a claim) as unknown, and the caller would abandon a record it had in fact finished. So the store
 * waits for the reply, bounded by the timeout as always, and hands the interrupt back set.
 *
 * <p>The commands may be a standalone connection's or a cluster connection's: in a cluster Lettuce
 * routes each script to the primary that owns its keys' slot.
 */
final class ScriptRunner {

  private static final Logger log = LoggerFactory.getLogger(ScriptRunner.class);

  private final RedisClusterAsyncCommands<byte[], byte[]> commands;
  private final Duration timeout;
  private final Timer timer;

  /**
   * @param timer bounds every wait: the connection's own (Lettuce's hashed wheel). Not {@link
   *     CompletableFuture#orTimeout}: cancelling its timer when a reply comes takes the lock of the
   *     JDK's shared delay queue on the thread that completes the reply, a Lettuce event loop,
   *     which then parks whenever another thread holds it (BlockHound caught it under load). A
   *     wheel timer's cancel is a lock-free queue offer.
   */
  ScriptRunner(RedisClusterAsyncCommands<byte[], byte[]> commands, Duration timeout, Timer timer) {
    this.commands = commands;
    this.timeout = timeout;
    this.timer = timer;
    // The wheel starts on its first timeout, waiting for its thread: here, not on an event loop.
    timer.newTimeout(started -> {}, 1, TimeUnit.MILLISECONDS);
  }

  /** Fails {@code stage} with a {@link TimeoutException} if the command timeout passes first. */
  private <T> CompletableFuture<T> bounded(CompletableFuture<T> stage) {
    if (stage.isDone()) {
      return stage;
    }
    Timeout deadline =
        timer.newTimeout(
            passed ->
                stage.completeExceptionally(
                    new TimeoutException("no reply within the command timeout of " + timeout)),
            timeout.toNanos(),
            TimeUnit.NANOSECONDS);
    stage.whenComplete((reply, failure) -> deadline.cancel());
    return stage;
  }

  /** Loads every script into the script cache (of every primary, in a cluster); best effort. */
  void preload() {
    for (LuaScript script : LuaScript.ALL) {
      try {
        await("SCRIPT LOAD", commands.scriptLoad(script.source()));
      } catch (StoreUnavailableException e) {
        // Not fatal: EVALSHA falls back to EVAL, which loads the script where it is missing.
        log.debug("could not preload {}: {}", script, e.toString());
      }
    }
  }

  /**
   * Runs the script on the record key {@code key} without waiting: the stage completes with its
   * reply, or with {@link StoreUnavailableException} when it fails or the command timeout passes
   * (the command is then cancelled, so that Lettuce drops it). The stage completes on a Lettuce
   * thread, so what follows it must not block. A blocking call waits for it with {@link #join}.
   */
  <T> CompletableFuture<T> call(
      LuaScript script, ScriptOutputType type, byte[] key, byte[]... args) {
    return call(script, type, new byte[][] {key}, args);
  }

  /** {@link #call} over several keys, which in a cluster must share a hash slot. */
  <T> CompletableFuture<T> call(
      LuaScript script, ScriptOutputType type, byte[][] keys, byte[]... args) {
    CompletableFuture<T> sent = runAsync(script, type, keys, args);
    // The timeout ends a copy, so that the command itself is cancelled (not merely timed out) and
    // Lettuce drops it.
    return within(script.name(), sent.copy(), List.of(sent));
  }

  /**
   * Sends the script without waiting, so that many can be pipelined; bound them with {@link
   * #allAsync}. In a cluster the keys must share a hash slot.
   */
  <T> CompletableFuture<T> runAsync(
      LuaScript script, ScriptOutputType type, byte[][] keys, byte[]... args) {
    RedisFuture<T> sent = commands.evalsha(script.sha(), type, keys, args);
    AtomicReference<RedisFuture<T>> resent = new AtomicReference<>();
    CompletableFuture<T> reply =
        sent.toCompletableFuture()
            .exceptionallyCompose(
                e -> {
                  Throwable cause = unwrapped(e);
                  if (cause instanceof RedisNoScriptException) {
                    log.debug("{} was not in the node's script cache; sending its source", script);
                    RedisFuture<T> again = commands.eval(script.source(), type, keys, args);
                    resent.set(again);
                    return again.toCompletableFuture();
                  }
                  return CompletableFuture.failedFuture(cause);
                });
    // Cancelling the reply (a timeout) cancels the commands themselves: Lettuce then drops one it
    // still holds (queued while disconnected) instead of sending it after a reconnect, when nobody
    // waits for its answer and a claim would leave a record in progress that no one holds.
    reply.whenComplete(
        (ignored, failure) -> {
          if (failure instanceof CancellationException) {
            sent.cancel(false);
            RedisFuture<T> fallback = resent.get();
            if (fallback != null) {
              fallback.cancel(false);
            }
          }
        });
    return reply;
  }

  /** Waits for one command that is not a script (a scan, a subscription); see {@link #allAsync}. */
  <T> T await(String operation, CompletionStage<T> command) {
    return join(allAsync(operation, List.of(command.toCompletableFuture()))).get(0);
  }

  /**
   * Completes with every reply in order, or, once one command fails or the timeout passes (one
   * deadline for all, from now), cancels the rest and fails with {@link StoreUnavailableException}.
   * Completes on a Lettuce or timer thread, so what follows must not block.
   */
  <T> CompletableFuture<List<T>> allAsync(String operation, List<CompletableFuture<T>> pending) {
    return within(
            operation,
            CompletableFuture.allOf(pending.toArray(CompletableFuture<?>[]::new)),
            pending)
        .thenApply(all -> pending.stream().map(CompletableFuture::join).toList());
  }

  /**
   * {@code reply}, bounded by the timeout; if it fails or the timeout passes first, {@code
   * commands} are cancelled and it fails with {@link StoreUnavailableException}.
   */
  private <T> CompletableFuture<T> within(
      String operation, CompletableFuture<T> reply, List<? extends CompletableFuture<?>> commands) {
    return bounded(reply)
        .handle(
            (answer, failure) -> {
              if (failure == null) {
                return answer;
              }
              commands.forEach(command -> command.cancel(false));
              throw unavailable(operation, unwrapped(failure));
            });
  }

  /**
   * The one place a blocking call waits: for a stage built of {@link #call} and {@link #allAsync}
   * stages, whose every command is bounded by the timeout already. Returns its reply or throws what
   * it failed with, unwrapped, as Lettuce's sync API does over its async one. Not cut short by an
   * interrupt (see the class comment): {@link CompletableFuture#join} waits through it and sets it
   * again before returning.
   */
  <T> T join(CompletionStage<T> stage) {
    try {
      return stage.toCompletableFuture().join();
    } catch (CompletionException e) {
      Throwable failure = unwrapped(e);
      if (failure instanceof RuntimeException runtime) {
        throw runtime;
      }
      if (failure instanceof Error error) {
        throw error;
      }
      throw unavailable("the operation", failure);
    }
  }

  private static Throwable unwrapped(Throwable failure) {
    return failure instanceof CompletionException && failure.getCause() != null
        ? failure.getCause()
        : failure;
  }

  StoreUnavailableException unavailable(String operation, Throwable e) {
    String why =
        e instanceof TimeoutException
            ? "no reply in time"
            : e.getMessage() != null ? e.getMessage() : e.getClass().getSimpleName();
    return new StoreUnavailableException(
        "Redis could not run "
            + operation
            + " (command timeout "
            + timeout.toMillis()
            + " ms): "
            + why,
        e);
  }
}
