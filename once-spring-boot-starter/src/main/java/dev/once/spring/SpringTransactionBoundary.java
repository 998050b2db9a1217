package dev.once.spring;

import dev.once.http.Route;
import dev.once.servlet.TransactionBoundary;
import jakarta.servlet.ServletException;
import java.io.IOException;
import java.sql.Connection;
import java.util.Set;
import org.springframework.jdbc.datasource.DataSourceUtils;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

/**
 * Runs the guarded part of a request on a transactional route in a Spring transaction on the
 * store's DataSource: the claim, every {@code JdbcTemplate} (or JPA) write of the handler, and the
 * record commit together, before the response is sent.
 */
final class SpringTransactionBoundary implements TransactionBoundary {

  private final TransactionTemplate template;
  private final TransactionJoin join;
  private final Set<String> patterns;

  SpringTransactionBoundary(
      PlatformTransactionManager transactions, TransactionJoin join, Set<String> patterns) {
    this.template = new TransactionTemplate(transactions);
    this.join = join;
    this.patterns = Set.copyOf(patterns);
  }

  @Override
  public boolean covers(Route route) {
    return patterns.contains(route.pattern());
  }

  @Override
  public void run(Route route, Work work) throws IOException, ServletException {
    try {
      template.executeWithoutResult(
          status -> {
            Connection connection =
                DataSourceUtils.getConnection(join.dataSource()); // the transaction's own
            join.enter(connection);
            try {
              if (work.run() == Ending.ROLL_BACK) {
                status.setRollbackOnly();
              }
            } catch (IOException | ServletException e) {
              throw new CheckedFailure(e);
            } finally {
              join.leave();
              DataSourceUtils.releaseConnection(connection, join.dataSource());
            }
          });
    } catch (CheckedFailure f) {
      if (f.getCause() instanceof IOException io) {
        throw io;
      }
      throw (ServletException) f.getCause();
    }
  }

  /** Carries a checked exception through the template, which rolls back on runtime exceptions. */
  private static final class CheckedFailure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    CheckedFailure(Exception cause) {
      super(cause);
    }
  }
}
