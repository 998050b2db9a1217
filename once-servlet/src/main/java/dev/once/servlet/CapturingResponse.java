package dev.once.servlet;

import dev.once.http.Headers;
import dev.once.http.Problems;
import dev.once.http.StoredResponse;
import jakarta.servlet.ServletOutputStream;
import jakarta.servlet.WriteListener;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import jakarta.servlet.http.HttpServletResponseWrapper;
import java.io.IOException;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.Charset;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Locale;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * The response as the handler writes it. Status and headers go straight to the real response (which
 * stays uncommitted); the body is held in memory so that the whole response can be recorded before
 * the client sees it, and is sent with a computed {@code Content-Length} when the exchange
 * finishes.
 *
 * <p>A flush is held back too, because frameworks flush after writing a complete body; only a write
 * <em>after</em> a flush shows that the handler streams. Then, or when the body outgrows the cap,
 * the response turns into a plain pass-through: what was held is sent, and the rest goes out as the
 * handler writes it. {@code sendError} and {@code sendRedirect} are answered by the filter itself,
 * so that the first response and its replays are the same bytes.
 *
 * <p>Only the headers the handler set are recorded. Those already on the response when the filter
 * ran (an outer filter's request id, CORS headers) belong to that one request: they are noted when
 * the capture starts and left out unless the handler changed them (DESIGN §4).
 */
final class CapturingResponse extends HttpServletResponseWrapper {

  private final HttpServletResponse real;
  private final HttpServletRequest request;
  private final int cap;

  /** The header fields on the response before the handler ran (an outer filter's). */
  private final Headers outer;

  /** The content type before the handler ran, for containers that keep it apart from the fields. */
  private final String outerContentType;

  private byte[] buffer = new byte[512];
  private static final byte[] RELEASED = new byte[0];
  private int count;

  /** A flush arrived with bytes held: the next write means the handler streams. */
  private boolean flushPending;

  /** The body goes straight to the client: streamed, or handed back after a failure. */
  private boolean passingThrough;

  private boolean streamed;

  /** After sendError, sendRedirect or close, the body is complete. */
  private boolean closed;

  private int errorStatus = -1;
  private @Nullable String errorMessage;
  private long declaredLength = -1;

  private @Nullable Body body;
  private @Nullable PrintWriter writer;

  /** Set while the filter itself drains the writer, so that its flush is not the handler's. */
  private boolean draining;

  private @Nullable ServletOutputStream realStream;

  /** Runs once, when the response starts to stream, before its first byte goes out. */
  private Runnable beforeStreaming = () -> {};

  CapturingResponse(HttpServletResponse real, HttpServletRequest request, int cap) {
    super(real);
    this.real = real;
    this.request = request;
    this.cap = cap;
    this.outer = fieldsOf(real);
    this.outerContentType = real.getContentType();
  }

  /** Whether the body went to the client as it was written, so it was not captured. */
  boolean isStreamed() {
    return streamed;
  }

  /**
   * Runs {@code action} when the response starts to stream, on the thread that writes, before the
   * first byte goes out (the exchange records the response as done then, see {@link
   * GuardedExchange}).
   */
  void beforeStreaming(Runnable action) {
    this.beforeStreaming = action;
  }

  @Override
  public ServletOutputStream getOutputStream() throws IOException {
    if (writer != null) {
      throw new IllegalStateException("getWriter() was already called on this response");
    }
    Body b = body();
    b.usedDirectly = true;
    return b;
  }

  @Override
  public PrintWriter getWriter() throws IOException {
    if (writer == null) {
      if (body != null && body.usedDirectly) {
        throw new IllegalStateException("getOutputStream() was already called on this response");
      }
      // As a container does on getWriter(): the encoding in use becomes part of the Content-Type.
      String encoding = real.getCharacterEncoding();
      real.setCharacterEncoding(encoding);
      writer = new PrintWriter(new OutputStreamWriter(body(), Charset.forName(encoding)), false);
    }
    return writer;
  }

  private Body body() {
    if (body == null) {
      body = new Body();
    }
    return body;
  }

  @Override
  public void flushBuffer() throws IOException {
    if (writer != null) {
      writer.flush();
    } else if (body != null) {
      body.flush();
    }
    if (passingThrough) {
      real.flushBuffer();
    }
  }

  @Override
  public void resetBuffer() {
    if (isCommitted()) {
      throw new IllegalStateException("the response is already committed");
    }
    drainWriter();
    count = 0;
    flushPending = false;
  }

  @Override
  public void reset() {
    if (isCommitted()) {
      throw new IllegalStateException("the response is already committed");
    }
    real.reset();
    resetBuffer();
    writer = null;
    if (body != null) {
      body.usedDirectly = false;
    }
    declaredLength = -1;
  }

  @Override
  public boolean isCommitted() {
    return passingThrough ? real.isCommitted() : closed || real.isCommitted();
  }

  @Override
  public void setBufferSize(int size) {
    if (count > 0) {
      throw new IllegalStateException("content was already written");
    }
    real.setBufferSize(size);
  }

  @Override
  public void setStatus(int sc) {
    if (!closed) {
      real.setStatus(sc);
    }
  }

  @Override
  public void sendError(int sc) throws IOException {
    sendError(sc, null);
  }

  @Override
  public void sendError(int sc, @Nullable String msg) throws IOException {
    if (passingThrough) {
      real.sendError(sc, msg);
      return;
    }
    if (isCommitted()) {
      throw new IllegalStateException("the response is already committed");
    }
    resetBuffer();
    real.setStatus(sc);
    errorStatus = sc;
    errorMessage = msg;
    closed = true;
  }

  @Override
  public void sendRedirect(String location) throws IOException {
    if (passingThrough) {
      real.sendRedirect(location);
      return;
    }
    if (isCommitted()) {
      throw new IllegalStateException("the response is already committed");
    }
    resetBuffer();
    real.setStatus(SC_FOUND);
    // Containers make a relative location absolute against the request URL.
    real.setHeader(
        "Location", URI.create(request.getRequestURL().toString()).resolve(location).toString());
    closed = true;
  }

  @Override
  public void setContentLength(int len) {
    setContentLengthLong(len);
  }

  @Override
  public void setContentLengthLong(long len) {
    // The filter sends the length it counted; a declared one only matters if the body streams.
    if (passingThrough) {
      real.setContentLengthLong(len);
    } else {
      declaredLength = len;
    }
  }

  @Override
  public void setHeader(String name, String value) {
    if (isContentLength(name)) {
      setContentLengthLong(value == null ? -1 : parseLength(value));
    } else {
      real.setHeader(name, value);
    }
  }

  @Override
  public void addHeader(String name, String value) {
    if (isContentLength(name)) {
      setContentLengthLong(parseLength(value));
    } else {
      real.addHeader(name, value);
    }
  }

  @Override
  public void setIntHeader(String name, int value) {
    if (isContentLength(name)) {
      setContentLengthLong(value);
    } else {
      real.setIntHeader(name, value);
    }
  }

  @Override
  public void addIntHeader(String name, int value) {
    if (isContentLength(name)) {
      setContentLengthLong(value);
    } else {
      real.addIntHeader(name, value);
    }
  }

  private static boolean isContentLength(String name) {
    return "Content-Length".equalsIgnoreCase(name);
  }

  private static long parseLength(String value) {
    try {
      return Long.parseLong(value.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  /**
   * The response as the handler left it. A {@code sendError} with an error status becomes an RFC
   * 9457 problem, set on the real response too, so that what is recorded is what is sent.
   */
  StoredResponse captured() {
    drainWriter();
    byte[] content = Arrays.copyOf(buffer, count);
    if (errorStatus >= 400 && errorStatus <= 599) {
      StoredResponse problem = Problems.forStatus(errorStatus, errorMessage);
      real.setContentType(problem.headers().first("Content-Type").orElseThrow());
      real.setCharacterEncoding("UTF-8");
      content = problem.body();
    }
    return new StoredResponse(real.getStatus(), realHeaders(), content);
  }

  /**
   * The header fields the handler set, as they are now; with a 304's declared length, which is the
   * representation's, for the first answer (the filter counts every other body's length itself; a
   * record stores no length, so a replayed 304 goes without one).
   */
  private Headers realHeaders() {
    Headers now = fieldsOf(real);
    Headers.Builder headers = Headers.builder();
    now.since(outer).forEach(f -> headers.add(f.name(), f.value()));
    if (real.getStatus() == SC_NOT_MODIFIED && declaredLength >= 0) {
      headers.add("Content-Length", Long.toString(declaredLength));
    }
    // Tomcat keeps the content type apart from the other fields until it commits.
    String contentType = real.getContentType();
    if (now.first("Content-Type").isEmpty()
        && contentType != null
        && !contentType.equals(outerContentType)) {
      headers.add("Content-Type", contentType);
    }
    return headers.build();
  }

  private static Headers fieldsOf(HttpServletResponse response) {
    Headers.Builder fields = Headers.builder();
    Set<String> seen = new HashSet<>();
    for (String name : response.getHeaderNames()) {
      if (seen.add(name.toLowerCase(Locale.ROOT))) {
        for (String value : response.getHeaders(name)) {
          fields.add(name, value);
        }
      }
    }
    return fields.build();
  }

  /**
   * Sends the captured response. A {@code sendError} whose outcome is transient (never recorded)
   * goes to the container instead, which renders its own error page.
   */
  void commit(StoredResponse captured, boolean transientOutcome) throws IOException {
    if (errorStatus >= 0 && (transientOutcome || errorStatus < 400 || errorStatus > 599)) {
      real.sendError(errorStatus, errorMessage);
      return;
    }
    Responses.writeBody(real, captured);
  }

  /** Lets the last characters of a streamed response out. */
  void finishStreaming() {
    if (writer != null) {
      writer.flush();
    }
  }

  /**
   * The handler failed: what it wrote is dropped, and whatever is written from now on goes to the
   * client.
   */
  void discard() {
    drainWriter();
    count = 0;
    passingThrough = true;
  }

  private void drainWriter() {
    if (writer != null) {
      draining = true;
      try {
        writer.flush();
      } finally {
        draining = false;
      }
    }
  }

  private ServletOutputStream realStream() throws IOException {
    if (realStream == null) {
      realStream = real.getOutputStream();
    }
    return realStream;
  }

  /** From now on the body goes to the client as it is written; what was held goes first. */
  private void stream() throws IOException {
    passingThrough = true;
    streamed = true;
    beforeStreaming.run();
    if (declaredLength >= 0) {
      real.setContentLengthLong(declaredLength);
    }
    ServletOutputStream out = realStream();
    out.write(buffer, 0, count);
    count = 0;
    buffer = RELEASED; // streaming: what was held went out
    if (flushPending) {
      out.flush();
      flushPending = false;
    }
  }

  /** The body stream the handler writes to. */
  private final class Body extends ServletOutputStream {

    /** Whether the handler asked for this stream itself (rather than through a writer). */
    boolean usedDirectly;

    @Override
    public void write(int b) throws IOException {
      write(new byte[] {(byte) b}, 0, 1);
    }

    @Override
    public void write(byte[] b, int off, int len) throws IOException {
      java.util.Objects.checkFromIndexSize(off, len, b.length);
      if (len == 0 || closed && !passingThrough) {
        return;
      }
      if (!passingThrough && (flushPending || len > cap - count)) {
        stream();
      }
      if (passingThrough) {
        realStream().write(b, off, len);
        return;
      }
      if (count + len > buffer.length) {
        buffer = Arrays.copyOf(buffer, Math.min(cap, Math.max(buffer.length * 2, count + len)));
      }
      System.arraycopy(b, off, buffer, count, len);
      count += len;
    }

    @Override
    public void flush() throws IOException {
      if (draining) {
        return;
      }
      if (passingThrough) {
        realStream().flush();
      } else if (count > 0) {
        flushPending = true;
      }
    }

    @Override
    public void close() throws IOException {
      if (passingThrough) {
        realStream().close();
      } else {
        closed = true; // as a container would: the body is complete, later writes are ignored
      }
    }

    @Override
    public boolean isReady() {
      try {
        return !passingThrough || realStream().isReady();
      } catch (IOException e) {
        return false;
      }
    }

    /** Non-blocking output is the container's business: such a response streams. */
    @Override
    public void setWriteListener(WriteListener listener) {
      try {
        if (!passingThrough) {
          stream();
        }
        realStream().setWriteListener(listener);
      } catch (IOException e) {
        listener.onError(e);
      }
    }
  }
}
