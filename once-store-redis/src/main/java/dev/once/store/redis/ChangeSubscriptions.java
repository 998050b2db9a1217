package dev.once.store.redis;

import dev.once.store.StoreUnavailableException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.pubsub.RedisPubSubAdapter;
import io.lettuce.core.pubsub.StatefulRedisPubSubConnection;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The waiters of {@code awaitChange}, over one pub/sub connection per store, opened on the first
 * wait. A record's channel is subscribed while someone waits on it: the first waiter subscribes, a
 * message wakes every waiter and unsubscribes, and the last waiter to give up unsubscribes.
 *
 * <p>Subscribe and unsubscribe are sent under this object's lock, so Redis sees them in the order
 * the waiters asked; a waiter then waits for its subscription's acknowledgement outside the lock,
 * so that when {@link #await} returns, a change published afterwards cannot be missed. Lettuce
 * subscribes the channels again after a reconnect; a message published while disconnected is lost,
 * which the SPI allows (callers bound every wait by the lease).
 *
 * <p>Waiters are woken with {@link CompletableFuture#completeAsync}, never on Lettuce's event loop:
 * a dependent action that calls the store synchronously there would wait for the very thread it
 * blocks.
 */
final class ChangeSubscriptions implements AutoCloseable {

  private final Supplier<StatefulRedisPubSubConnection<byte[], byte[]>> connector;
  private final ScriptRunner runner;
  private final Map<ByteBuffer, Subscription> subscriptions = new HashMap<>();
  private @Nullable StatefulRedisPubSubConnection<byte[], byte[]> connection;
  private boolean closed;

  ChangeSubscriptions(
      Supplier<StatefulRedisPubSubConnection<byte[], byte[]>> connector, ScriptRunner runner) {
    this.connector = connector;
    this.runner = runner;
  }

  /**
   * Returns a future completed after the next message on {@code channel}, subscribed before it
   * returns.
   */
  CompletableFuture<Void> await(byte[] channel) {
    CompletableFuture<Void> change = new CompletableFuture<>();
    ByteBuffer name = ByteBuffer.wrap(channel);
    RedisFuture<Void> subscribed;
    synchronized (this) {
      if (closed) {
        change.complete(null);
        return change;
      }
      StatefulRedisPubSubConnection<byte[], byte[]> pubSub = connection();
      Subscription subscription = subscriptions.get(name);
      if (subscription == null) {
        subscription = new Subscription(pubSub.async().subscribe(channel));
        subscriptions.put(name, subscription);
      }
      subscription.waiters.add(change);
      subscribed = subscription.acknowledged;
    }
    // However the wait ends (woken, cancelled, timed out by the caller), it stops counting.
    change.whenComplete((ignored, failure) -> leave(name, change));
    try {
      runner.await("SUBSCRIBE", subscribed);
    } catch (StoreUnavailableException e) {
      change.cancel(false);
      throw e;
    }
    return change;
  }

  /** Wakes every waiter and closes the pub/sub connection; later waits complete at once. */
  @Override
  public void close() {
    List<CompletableFuture<Void>> toWake = new ArrayList<>();
    StatefulRedisPubSubConnection<byte[], byte[]> toClose;
    synchronized (this) {
      if (closed) {
        return;
      }
      closed = true;
      subscriptions.values().forEach(s -> toWake.addAll(s.waiters));
      subscriptions.clear();
      toClose = connection;
      connection = null;
    }
    toWake.forEach(f -> f.complete(null));
    if (toClose != null) {
      toClose.closeAsync();
    }
  }

  /** Waits not yet woken or given up, for tests. */
  synchronized int waiterCount() {
    return subscriptions.values().stream().mapToInt(s -> s.waiters.size()).sum();
  }

  private StatefulRedisPubSubConnection<byte[], byte[]> connection() {
    StatefulRedisPubSubConnection<byte[], byte[]> current = connection;
    if (current == null) {
      try {
        current = connector.get();
      } catch (RedisException e) {
        throw runner.unavailable("the pub/sub connection", e);
      }
      connection = current;
      current.addListener(
          new RedisPubSubAdapter<>() {
            @Override
            public void message(byte[] channel, byte[] message) {
              changed(channel);
            }
          });
    }
    return current;
  }

  /**
   * The connection, while there are subscriptions: the first opened it, and closing removes them
   * all.
   */
  private StatefulRedisPubSubConnection<byte[], byte[]> subscribed() {
    return Objects.requireNonNull(connection, "a subscription without a connection");
  }

  private void changed(byte[] channel) {
    ByteBuffer name = ByteBuffer.wrap(channel);
    List<CompletableFuture<Void>> toWake;
    synchronized (this) {
      Subscription subscription = subscriptions.remove(name);
      if (subscription == null) {
        return;
      }
      subscribed().async().unsubscribe(channel);
      toWake = new ArrayList<>(subscription.waiters);
    }
    toWake.forEach(f -> f.completeAsync(() -> null));
  }

  private void leave(ByteBuffer name, CompletableFuture<Void> change) {
    synchronized (this) {
      Subscription subscription = subscriptions.get(name);
      if (subscription != null
          && subscription.waiters.remove(change)
          && subscription.waiters.isEmpty()) {
        subscriptions.remove(name);
        subscribed().async().unsubscribe(name.array());
      }
    }
  }

  private static final class Subscription {
    final RedisFuture<Void> acknowledged;
    final Set<CompletableFuture<Void>> waiters = new LinkedHashSet<>();

    Subscription(RedisFuture<Void> acknowledged) {
      this.acknowledged = acknowledged;
    }
  }
}
