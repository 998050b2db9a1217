package dev.once.servlet;

import dev.once.http.Route;
import jakarta.servlet.ServletException;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * A transaction boundary over routes whose pattern starts with {@code /tx}: it records how each
 * transaction ended, and can hold a finished transaction open to show that nothing is sent before.
 */
final class RecordingTransactions implements TransactionBoundary {

  final List<String> endings = new CopyOnWriteArrayList<>();
  volatile CountDownLatch holdCommit = new CountDownLatch(0);

  /** Counted down when a transaction's work is done and it is about to end. */
  volatile CountDownLatch workDone = new CountDownLatch(1);

  /**
   * Whether the response had been committed (its head sent) when the last transaction was about to
   * end.
   */
  volatile boolean committedBeforeEnd;

  @Override
  public boolean covers(Route route) {
    return route.pattern().startsWith("/tx");
  }

  @Override
  public void run(Route route, Work work) throws IOException, ServletException {
    Ending ending;
    try {
      ending = work.run();
    } catch (IOException | ServletException | RuntimeException | Error e) {
      endings.add("ROLL_BACK on " + e.getClass().getSimpleName());
      throw e;
    }
    jakarta.servlet.http.HttpServletResponse response = FakeOuterFilter.CURRENT.get();
    committedBeforeEnd = response != null && response.isCommitted();
    workDone.countDown();
    try {
      holdCommit.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    endings.add(ending.name());
  }
}
