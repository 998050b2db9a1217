package dev.once.store.redis;

import dev.once.store.StoreUnavailableException;
import io.lettuce.core.LettuceFutures;
import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs the store's scripts: {@code EVALSHA}, and {@code EVAL} of the source when a node answers
 * {@code NOSCRIPT} (its script cache is empty after a restart, a failover or {@code SCRIPT FLUSH};
 * {@code EVAL} also caches the script there again). Every wait is bounded by the command timeout,
 * and every Lettuce failure becomes a {@link StoreUnavailableException}.
 *
 * <p>The commands may be a standalone connection's or a cluster connection's: in a cluster Lettuce
 * routes each script to the primary that owns its key's slot.
 */
final class ScriptRunner {

  private static final Logger log = LoggerFactory.getLogger(ScriptRunner.class);

  private final RedisClusterAsyncCommands<byte[], byte[]> commands;
  private final long timeoutNanos;
  private final Duration timeout;

  ScriptRunner(RedisClusterAsyncCommands<byte[], byte[]> commands, Duration timeout) {
    this.commands = commands;
    this.timeout = timeout;
    this.timeoutNanos = timeout.toNanos();
  }

  /** Loads every script into the script cache (of every primary, in a cluster); best effort. */
  void preload() {
    for (LuaScript script : LuaScript.ALL) {
      try {
        await(commands.scriptLoad(script.source()));
      } catch (RedisException e) {
        // Not fatal: EVALSHA falls back to EVAL, which loads the script where it is missing.
        log.debug("could not preload {}: {}", script, e.toString());
      }
    }
  }

  /** Runs the script on the record key {@code key} and returns its reply, waiting at most the timeout for each step. */
  <T> T run(LuaScript script, ScriptOutputType type, byte[] key, byte[]... args) {
    byte[][] keys = {key};
    try {
      try {
        return await(commands.<T>evalsha(script.sha(), type, keys, args));
      } catch (RedisNoScriptException e) {
        log.debug("{} was not in the node's script cache; sending its source", script);
        return await(commands.<T>eval(script.source(), type, keys, args));
      }
    } catch (RedisException e) {
      throw unavailable(script.name(), e);
    }
  }

  /** Like {@link #run} without waiting, so many scripts can be pipelined; failures are Lettuce's exceptions. */
  <T> CompletableFuture<T> runAsync(LuaScript script, ScriptOutputType type, byte[] key, byte[]... args) {
    byte[][] keys = {key};
    return commands.<T>evalsha(script.sha(), type, keys, args).toCompletableFuture()
        .exceptionallyCompose(e -> {
          Throwable cause = e instanceof CompletionException && e.getCause() != null ? e.getCause() : e;
          if (cause instanceof RedisNoScriptException) {
            return commands.<T>eval(script.source(), type, keys, args).toCompletableFuture();
          }
          return CompletableFuture.failedFuture(cause);
        });
  }

  /** Waits for a command at most the timeout, cancelling it if it does not finish. */
  <T> T await(RedisFuture<T> future) {
    return LettuceFutures.awaitOrCancel(future, timeoutNanos, TimeUnit.NANOSECONDS);
  }

  Duration timeout() {
    return timeout;
  }

  StoreUnavailableException unavailable(String operation, RuntimeException e) {
    if (e instanceof RedisCommandInterruptedException) {
      Thread.currentThread().interrupt();
    }
    return new StoreUnavailableException("Redis could not run " + operation + " (command timeout "
        + timeout.toMillis() + " ms): " + e.getMessage(), e);
  }
}
