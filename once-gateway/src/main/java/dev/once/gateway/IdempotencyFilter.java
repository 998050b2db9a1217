package dev.once.gateway;

import dev.once.http.HttpIdempotency;
import dev.once.servlet.OnceFilter;
import jakarta.servlet.DispatcherType;
import java.util.EnumSet;
import org.eclipse.jetty.ee10.servlet.FilterHolder;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;

/** Puts once-servlet's {@link OnceFilter} in front of the proxy servlet. */
final class IdempotencyFilter {

  private IdempotencyFilter() {}

  static void install(ServletContextHandler context, HttpIdempotency http) {
    FilterHolder filter = new FilterHolder(OnceFilter.of(http));
    filter.setName("once");
    // The proxy answers asynchronously: the filter records the response when the proxy completes.
    filter.setAsyncSupported(true);
    context.addFilter(filter, "/*", EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC));
  }
}
