package dev.once.store.jdbc;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A {@link Connections} that, once armed, commits the next transaction and then throws as if the
 * connection broke before the database's answer came back: the one failure after which a store
 * cannot know whether its writes stand.
 */
final class LosingCommitAnswers implements Connections {

  private final Connections delegate;
  private final AtomicBoolean armed = new AtomicBoolean();

  private LosingCommitAnswers(Connections delegate) {
    this.delegate = delegate;
  }

  /** The batch calls of {@code store} (as its dialect makes them) over connections like its own. */
  static LosingCommitAnswers around(JdbcStore store) {
    return new LosingCommitAnswers(store.connections);
  }

  JdbcOperations operations(JdbcStore like) {
    return new JdbcStore(like.dialect, this, like.timeoutSeconds, ChangeFeed.NONE) {}.operations;
  }

  /** The next commit is made, and its answer lost. */
  void loseNextCommitAnswer() {
    armed.set(true);
  }

  @Override
  public <T> T run(Session.SqlWork<T> work, int timeoutSeconds) throws SQLException {
    return delegate.run(
        session -> work.run(session.on(losing(session.connection()))), timeoutSeconds);
  }

  private Connection losing(Connection connection) {
    return (Connection)
        Proxy.newProxyInstance(
            getClass().getClassLoader(),
            new Class<?>[] {Connection.class},
            (proxy, method, args) -> {
              Object answer;
              try {
                answer = method.invoke(connection, args);
              } catch (InvocationTargetException e) {
                throw e.getCause();
              }
              if (method.getName().equals("commit") && armed.getAndSet(false)) {
                throw new SQLException("the connection broke before COMMIT was answered", "08006");
              }
              return answer;
            });
  }

  @Override
  public TransactionControl control() {
    return delegate.control();
  }
}
