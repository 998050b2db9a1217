package dev.once.gateway;

import dev.once.http.Headers;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/** A request to Jetty's server, as the proxy's rules see a client: see {@link ClientHop}. */
record JettyHop(Request request, Response response, Callback callback) implements ClientHop {

  @Override
  public String method() {
    return request.getMethod();
  }

  @Override
  public String path() {
    return request.getHttpURI().getPath();
  }

  @Override
  public String decodedPath() {
    return Request.getPathInContext(request);
  }

  @Override
  public @Nullable String query() {
    return request.getHttpURI().getQuery();
  }

  @Override
  public String scheme() {
    return request.getHttpURI().getScheme();
  }

  @Override
  public boolean http11() {
    return request.getConnectionMetaData().getHttpVersion() == HttpVersion.HTTP_1_1;
  }

  @Override
  public Headers headers() {
    return headersOf(request.getHeaders());
  }

  /** Jetty's fields (a request's here, a response's in {@link JettyUpstream}) as the rules'. */
  static Headers headersOf(HttpFields fields) {
    Headers.Builder headers = Headers.builder();
    for (HttpField f : fields) {
      headers.add(f.getName(), f.getValue());
    }
    return headers.build();
  }

  @Override
  public long declaredLength() {
    return request.getLength();
  }

  @Override
  public SocketAddress peer() {
    return request.getConnectionMetaData().getRemoteSocketAddress();
  }

  @Override
  public String peerAddress() {
    return Request.getRemoteAddr(request);
  }

  @Override
  public Content.Source body() {
    return request;
  }

  @Override
  public boolean consumeAvailable() {
    return request.consumeAvailable();
  }

  @Override
  public Scheduler scheduler() {
    return request.getComponents().getScheduler();
  }

  @Override
  public void status(int status) {
    response.setStatus(status);
  }

  @Override
  public HttpFields.Mutable answerFields() {
    return response.getHeaders();
  }

  @Override
  public void write(boolean last, ByteBuffer bytes, Callback done) {
    if (last
        && !bytes.hasRemaining()
        && response.getStatus() == HttpStatus.NOT_MODIFIED_304
        && !response.isCommitted()
        && !response.getHeaders().contains(HttpHeader.CONTENT_LENGTH)) {
      // Jetty gives a response written whole in one write the length of what it wrote, 0 here,
      // which for a 304 would claim an empty representation: committed first, it gets none.
      response.write(
          false,
          BufferUtil.EMPTY_BUFFER,
          Callback.from(() -> response.write(true, BufferUtil.EMPTY_BUFFER, done), done::failed));
      return;
    }
    response.write(last, bytes, done);
  }

  @Override
  public boolean committed() {
    return response.isCommitted();
  }

  @Override
  public void end(@Nullable Throwable failure) {
    if (failure == null) {
      callback.succeeded();
    } else {
      callback.failed(failure);
    }
  }
}
