package dev.once.gateway;

import dev.once.http.Problems;
import dev.once.http.StoredResponse;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpMethod;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.handler.ErrorHandler;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;

/**
 * What the proxy answers when Jetty refuses a request itself (a malformed request line, header
 * fields over the limit, a target too long) or a request ends in a failure before it was answered:
 * an RFC 9457 problem with the status's reason phrase ({@link Problems#forStatus}), for every
 * method. Jetty's own handler writes an HTML page, and that only for GET, POST and HEAD (any other
 * method got the status without a body). Jetty's message is left out: it may quote the request. A
 * HEAD request gets the problem's head without its content (RFC 9110 §9.3.2): Jetty does not drop
 * the content of an answer it makes before the request is whole.
 */
final class ProblemErrors extends ErrorHandler {

  @Override
  public boolean errorPageForMethod(String method) {
    return true;
  }

  @Override
  protected void generateResponse(
      Request request,
      Response response,
      int code,
      @Nullable String message,
      @Nullable Throwable cause,
      Callback callback) {
    if (code < 400 || code > 599) {
      callback.succeeded(); // no problem to tell: the status alone
      return;
    }
    StoredResponse problem = Problems.forStatus(code, null);
    response.getHeaders().put(HttpHeader.CONTENT_TYPE, Problems.MEDIA_TYPE);
    boolean head = HttpMethod.HEAD.is(request.getMethod());
    response.write(true, head ? null : ByteBuffer.wrap(problem.body()), callback);
  }
}
