package dev.once.gateway;

import io.netty.util.concurrent.EventExecutor;
import io.netty.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.util.component.AbstractLifeCycle;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * An event loop's timers as the proxy's rules ask for them ({@link Scheduler}): a deadline on a
 * request runs on the loop that carries the request, never on a timer thread that would have to
 * hand it back.
 */
final class NettyTimers extends AbstractLifeCycle implements Scheduler {

  private final EventExecutor loop;

  NettyTimers(EventExecutor loop) {
    this.loop = loop;
  }

  @Override
  public Task schedule(Runnable task, long delay, TimeUnit units) {
    ScheduledFuture<?> future = loop.schedule(task, delay, units);
    return () -> future.cancel(false);
  }
}
