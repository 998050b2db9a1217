package dev.once.gateway;

import dev.once.http.HttpIdempotency;
import org.eclipse.jetty.ee10.servlet.ServletContextHandler;

/** Puts once-servlet's filter in front of the proxy servlet, for request and async dispatches. */
final class IdempotencyFilter {

  private IdempotencyFilter() {}

  static void install(ServletContextHandler context, HttpIdempotency http) {
    // Wired in when once-servlet lands: OnceFilter.of(http) on /* for REQUEST and ASYNC.
  }
}
