package dev.once.store.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link Connections} that counts what passes through it: how many operations took a connection,
 * and how many statements they prepared on it. Round trips are what a batched operation saves, and
 * these two numbers bound them.
 */
final class CountingConnections implements Connections {

  final AtomicInteger opened = new AtomicInteger();
  final AtomicInteger prepared = new AtomicInteger();
  private final Connections delegate;

  /** The delegate's connection behind each counting one handed out. */
  private final Map<Connection, Connection> originals =
      Collections.synchronizedMap(new IdentityHashMap<>());

  CountingConnections(Connections delegate) {
    this.delegate = delegate;
  }

  /**
   * A store over the same table, dialect and connections as {@code store}, counting its use of
   * them.
   */
  static CountingConnections around(JdbcStore store) {
    return new CountingConnections(store.connections);
  }

  JdbcStore store(JdbcStore like) {
    return new JdbcStore(like.dialect, this, like.timeoutSeconds, ChangeFeed.NONE) {};
  }

  /** {@code connection}, counting the statements prepared on it. */
  Connection counting(Connection connection) {
    return (Connection)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              if (method.getName().equals("prepareStatement")) {
                prepared.incrementAndGet();
              }
              try {
                return method.invoke(connection, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
            });
  }

  @Override
  public Connection open() throws SQLException {
    opened.incrementAndGet();
    Connection original = delegate.open();
    Connection counting = counting(original);
    originals.put(counting, original);
    return counting;
  }

  @Override
  public void done(Connection connection) throws SQLException {
    delegate.done(originals.remove(connection));
  }

  @Override
  public void release(Connection connection, Exception failure) {
    delegate.release(originals.remove(connection), failure);
  }

  @Override
  public TransactionControl control() {
    return delegate.control();
  }
}
