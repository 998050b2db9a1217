package dev.once.servlet;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.AsyncListener;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import java.io.IOException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The container's {@link AsyncContext}, except that {@link #complete()} first records and sends the
 * captured response: once the container completes, nothing more can be written.
 */
final class GuardedAsyncContext implements AsyncContext {

  private static final Logger log = LoggerFactory.getLogger(GuardedAsyncContext.class);

  private final AsyncContext delegate;
  private final GuardedExchange guard;

  GuardedAsyncContext(AsyncContext delegate, GuardedExchange guard) {
    this.delegate = delegate;
    this.guard = guard;
  }

  boolean wraps(AsyncContext context) {
    return delegate == context;
  }

  @Override
  public void complete() {
    try {
      guard.finish();
    } catch (IOException e) {
      // The outcome is recorded before sending; the client went away while it was sent.
      log.debug("could not send the response of an asynchronous exchange", e);
    } catch (RuntimeException e) {
      // The exchange is settled all the same: GuardedExchange settles the lease before it rethrows.
      log.warn(
          "could not finish the response of an asynchronous exchange; its outcome is settled", e);
    } finally {
      delegate.complete();
    }
  }

  @Override
  public ServletRequest getRequest() {
    return delegate.getRequest();
  }

  @Override
  public ServletResponse getResponse() {
    return delegate.getResponse();
  }

  @Override
  public boolean hasOriginalRequestAndResponse() {
    return delegate.hasOriginalRequestAndResponse();
  }

  @Override
  public void dispatch() {
    delegate.dispatch();
  }

  @Override
  public void dispatch(String path) {
    delegate.dispatch(path);
  }

  @Override
  public void dispatch(ServletContext context, String path) {
    delegate.dispatch(context, path);
  }

  @Override
  public void start(Runnable run) {
    delegate.start(run);
  }

  @Override
  public void addListener(AsyncListener listener) {
    delegate.addListener(listener);
  }

  @Override
  public void addListener(
      AsyncListener listener, ServletRequest request, ServletResponse response) {
    delegate.addListener(listener, request, response);
  }

  @Override
  public <T extends AsyncListener> T createListener(Class<T> clazz) throws ServletException {
    return delegate.createListener(clazz);
  }

  @Override
  public void setTimeout(long timeout) {
    delegate.setTimeout(timeout);
  }

  @Override
  public long getTimeout() {
    return delegate.getTimeout();
  }
}
