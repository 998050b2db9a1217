package dev.once.store.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A {@link Connections} that counts what passes through it: how many operations took a connection,
 * how many statements they prepared on it, and how many times those ran. Round trips and the
 * database's work per statement are what a batched operation saves, and these numbers bound them.
 */
final class CountingConnections implements Connections {

  final AtomicInteger opened = new AtomicInteger();
  final AtomicInteger prepared = new AtomicInteger();

  /** Statement executions: each {@code execute…} call, and each row added to a JDBC batch. */
  final AtomicInteger executed = new AtomicInteger();

  private final Connections delegate;

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
              Object answer = invoke(connection, method, args);
              if (method.getName().equals("prepareStatement")) {
                prepared.incrementAndGet();
                return counting((PreparedStatement) answer);
              }
              return answer;
            });
  }

  /** {@code statement}, counting the executions it makes (a JDBC batch's rows each count). */
  private PreparedStatement counting(PreparedStatement statement) {
    return (PreparedStatement)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {PreparedStatement.class},
            (proxy, method, args) -> {
              String name = method.getName();
              if (name.equals("addBatch")
                  || (name.startsWith("execute") && !name.equals("executeBatch"))) {
                executed.incrementAndGet();
              }
              return invoke(statement, method, args);
            });
  }

  private static Object invoke(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  @Override
  public <T> T run(Session.SqlWork<T> work, int timeoutSeconds) throws SQLException {
    opened.incrementAndGet();
    return delegate.run(
        session -> work.run(session.on(counting(session.connection()))), timeoutSeconds);
  }

  @Override
  public TransactionControl control() {
    return delegate.control();
  }
}
