package dev.once.spring;

import dev.once.servlet.OnceFilter;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import org.jspecify.annotations.Nullable;
import org.springframework.core.Ordered;
import org.springframework.web.HttpRequestMethodNotSupportedException;
import org.springframework.web.servlet.HandlerExceptionResolver;
import org.springframework.web.servlet.ModelAndView;
import org.springframework.web.servlet.NoHandlerFoundException;
import org.springframework.web.servlet.resource.NoResourceFoundException;

/**
 * Tells {@link OnceFilter} when Spring MVC found no handler for a request: a POST to a path nothing
 * is mapped to is answered 404 by the router, and recording that 404 would replay "not found" to a
 * retry sent after the endpoint is deployed. It only marks the request and resolves nothing, so the
 * application's own resolvers still write the answer.
 */
final class UnhandledRequests implements HandlerExceptionResolver, Ordered {

  @Override
  public @Nullable ModelAndView resolveException(
      HttpServletRequest request,
      HttpServletResponse response,
      @Nullable Object handler,
      Exception ex) {
    if (ex instanceof NoHandlerFoundException
        || ex instanceof NoResourceFoundException
        || (ex instanceof HttpRequestMethodNotSupportedException && !isHandlerMethod(handler))) {
      request.setAttribute(OnceFilter.OUTCOME, OnceFilter.NOT_HANDLED);
    }
    return null;
  }

  /**
   * A controller method may throw "method not supported" itself; the router throws it before any
   * handler method is chosen.
   */
  private static boolean isHandlerMethod(@Nullable Object handler) {
    return handler instanceof org.springframework.web.method.HandlerMethod;
  }

  @Override
  public int getOrder() {
    return Ordered.HIGHEST_PRECEDENCE;
  }
}
