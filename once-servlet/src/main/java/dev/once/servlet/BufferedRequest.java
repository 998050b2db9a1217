package dev.once.servlet;

import jakarta.servlet.AsyncContext;
import jakarta.servlet.ServletContext;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletInputStream;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletRequestWrapper;
import jakarta.servlet.http.Part;
import java.io.BufferedReader;
import java.io.ByteArrayInputStream;
import java.io.InputStreamReader;
import java.io.UnsupportedEncodingException;
import java.nio.charset.Charset;
import java.nio.charset.IllegalCharsetNameException;
import java.nio.charset.StandardCharsets;
import java.nio.charset.UnsupportedCharsetException;
import java.util.Collection;
import java.util.Collections;
import java.util.Enumeration;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * The request as the handler sees it after the filter read its body: the body can be read again, as
 * a stream or as characters, and form parameters still come from it. An asynchronous cycle started
 * on it keeps the filter's response wrapper and reports its end to the exchange.
 */
final class BufferedRequest extends HttpServletRequestWrapper {

  private final byte[] body;
  private @Nullable GuardedExchange guard;
  private @Nullable GuardedAsyncContext async;
  private @Nullable ServletInputStream stream;
  private @Nullable BufferedReader reader;
  private @Nullable Map<String, String[]> parameters;

  BufferedRequest(HttpServletRequest request, byte[] body) {
    super(request);
    this.body = body;
  }

  /** From now on, asynchronous cycles report to this exchange. */
  void guardedBy(GuardedExchange guard) {
    this.guard = guard;
  }

  @Override
  public ServletInputStream getInputStream() {
    if (reader != null) {
      throw new IllegalStateException("getReader() was already called on this request");
    }
    if (stream == null) {
      stream = new BodyInputStream(body);
    }
    return stream;
  }

  @Override
  public BufferedReader getReader() throws UnsupportedEncodingException {
    if (stream != null) {
      throw new IllegalStateException("getInputStream() was already called on this request");
    }
    if (reader == null) {
      reader = new BufferedReader(new InputStreamReader(new ByteArrayInputStream(body), charset()));
    }
    return reader;
  }

  private Charset charset() throws UnsupportedEncodingException {
    String name = getCharacterEncoding();
    if (name == null) {
      ServletContext context = getServletContext();
      name = context == null ? null : context.getRequestCharacterEncoding();
    }
    if (name == null) {
      return StandardCharsets.ISO_8859_1; // the Servlet specification's default
    }
    try {
      return Charset.forName(name);
    } catch (IllegalCharsetNameException | UnsupportedCharsetException e) {
      throw new UnsupportedEncodingException(name);
    }
  }

  @Override
  public int getContentLength() {
    return body.length;
  }

  @Override
  public long getContentLengthLong() {
    return body.length;
  }

  @Override
  public @Nullable String getParameter(String name) {
    String[] values = parameters().get(name);
    return values == null ? null : values[0];
  }

  @Override
  public Map<String, String[]> getParameterMap() {
    return parameters();
  }

  @Override
  public Enumeration<String> getParameterNames() {
    return Collections.enumeration(parameters().keySet());
  }

  @Override
  public String @Nullable [] getParameterValues(String name) {
    String[] values = parameters().get(name);
    return values == null ? null : values.clone();
  }

  /** The container no longer sees the body, so form parameters are parsed from our copy. */
  private Map<String, String[]> parameters() {
    if (parameters == null) {
      parameters =
          FormParameters.merge(
              super.getParameterMap(), getContentType(), getCharacterEncoding(), body);
    }
    return parameters;
  }

  @Override
  public Collection<Part> getParts() throws ServletException {
    throw multipartUnsupported();
  }

  @Override
  public Part getPart(String name) throws ServletException {
    throw multipartUnsupported();
  }

  private static ServletException multipartUnsupported() {
    return new ServletException(
        "multipart bodies cannot be parsed after OnceFilter buffered them;"
            + " leave multipart routes out of the idempotency routes or read getInputStream()");
  }

  @Override
  public AsyncContext startAsync() {
    return guarded(guard == null ? super.startAsync() : super.startAsync(this, guard.response()));
  }

  @Override
  public AsyncContext startAsync(ServletRequest request, ServletResponse response) {
    return guarded(super.startAsync(request, response));
  }

  @Override
  public AsyncContext getAsyncContext() {
    AsyncContext current = super.getAsyncContext();
    return async != null && async.wraps(current) ? async : current;
  }

  /**
   * Each asynchronous cycle gets the exchange as a listener, registered before any other thread can
   * complete it.
   */
  private AsyncContext guarded(AsyncContext context) {
    if (guard == null) {
      return context;
    }
    context.addListener(guard);
    async = new GuardedAsyncContext(context, guard);
    return async;
  }
}
