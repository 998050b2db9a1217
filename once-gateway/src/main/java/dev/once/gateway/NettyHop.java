package dev.once.gateway;

import dev.once.http.Headers;
import dev.once.http.HttpIdempotency;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpVersion;
import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ClosedChannelException;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * A request to the Netty core, as the proxy's rules see a client: see {@link ClientHop}. Its head
 * is Netty's decoded request, its target parsed once by Jetty's {@link HttpURI} (so that routes
 * match the same decoded path on either core), its body a {@link NettyBody}.
 *
 * <p>The rules may answer from any thread (a store's answer arrives on the store's): every write
 * and the end run on the connection's loop, in the order they were asked for.
 */
final class NettyHop implements ClientHop, NettyLoops.Bound {

  private final NettyConnection connection;
  private final HttpRequest request;
  private final HttpURI target;
  private final String decodedPath;
  private final Headers fields;
  private final NettyBody body;
  private final long declaredLength;
  private final boolean keepAliveAsked;

  /** When the head arrived, for the access line and the request timer. */
  final long beganNanos = System.nanoTime();

  private volatile int status = 200;
  private final HttpFields.Mutable answer = HttpFields.build();

  /** Whether the head went out: on the loop only ({@link #committedSeen} for other threads). */
  private boolean committed;

  /** The connection closes after this answer: on the loop only. */
  private boolean closeAfter;

  /** The client asked for a go-ahead before its body, and has not had it: on the loop only. */
  private boolean expectsContinue;

  private volatile boolean committedSeen;

  NettyHop(
      NettyConnection connection,
      HttpRequest request,
      HttpURI target,
      String decodedPath,
      Headers fields,
      long declaredLength,
      NettyBody body) {
    this.connection = connection;
    this.request = request;
    this.target = target;
    this.decodedPath = decodedPath;
    this.fields = fields;
    this.declaredLength = declaredLength;
    this.body = body;
    this.keepAliveAsked = NettyConnection.keepAlive(request);
  }

  @Override
  public EventLoop loop() {
    return connection.loop();
  }

  @Override
  public String method() {
    return request.method().name();
  }

  @Override
  public String path() {
    return target.getPath();
  }

  @Override
  public String decodedPath() {
    return decodedPath;
  }

  @Override
  public @Nullable String query() {
    return target.getQuery();
  }

  @Override
  public String scheme() {
    return "http";
  }

  @Override
  public boolean http11() {
    return request.protocolVersion().equals(HttpVersion.HTTP_1_1);
  }

  @Override
  public Headers headers() {
    return fields;
  }

  @Override
  public long declaredLength() {
    return declaredLength;
  }

  @Override
  public SocketAddress peer() {
    return connection.peer();
  }

  @Override
  public String peerAddress() {
    return connection.peer() instanceof InetSocketAddress inet
        ? inet.getAddress().getHostAddress()
        : String.valueOf(connection.peer());
  }

  @Override
  public Content.Source body() {
    return body;
  }

  NettyBody requestBody() {
    return body;
  }

  @Override
  public boolean consumeAvailable() {
    return body.consumeAvailable();
  }

  @Override
  public Scheduler scheduler() {
    return connection.timers();
  }

  @Override
  public void status(int status) {
    this.status = status;
  }

  int status() {
    return status;
  }

  @Override
  public HttpFields.Mutable answerFields() {
    return answer;
  }

  /** Whether the answer says it is a replay, for the access line. */
  boolean replayed() {
    return "true".equals(answer.get(HttpIdempotency.REPLAYED_HEADER));
  }

  @Override
  public void write(boolean last, ByteBuffer bytes, Callback done) {
    connection.onLoop(() -> send(last, bytes, done));
  }

  private void send(boolean last, ByteBuffer bytes, Callback done) {
    if (!connection.open()) {
      done.failed(new ClosedChannelException());
      return;
    }
    boolean bodiless = bodiless();
    if (!committed) {
      committed = true;
      committedSeen = true;
      connection.write(head(last, bodiless ? 0 : bytes.remaining()));
    }
    ChannelFuture written;
    if (bodiless || !bytes.hasRemaining()) {
      written =
          connection.writeAndFlush(
              last ? new DefaultLastHttpContent() : new DefaultHttpContent(Unpooled.EMPTY_BUFFER));
    } else {
      // A view of the rules' bytes: they stay untouched until done runs.
      var content = Unpooled.wrappedBuffer(bytes);
      written =
          connection.writeAndFlush(
              last ? new DefaultLastHttpContent(content) : new DefaultHttpContent(content));
    }
    written.addListener(
        f -> {
          if (f.isSuccess()) {
            done.succeeded();
          } else {
            done.failed(f.cause());
          }
        });
  }

  /** A HEAD, a 1xx, a 204 and a 304 carry no body whatever their fields say (RFC 9112 §6.3). */
  private boolean bodiless() {
    return request.method().name().equals("HEAD") || status < 200 || status == 204 || status == 304;
  }

  /**
   * The answer's head as it goes out: the rules' fields, the server's {@code Date}, and the
   * connection's fate. A whole answer written at once gets its length; a streamed one of unknown
   * length is chunked (the rules said so) or, to an HTTP/1.0 client, ended by the close.
   */
  private HttpResponse head(boolean last, int length) {
    HttpResponse head =
        new DefaultHttpResponse(
            request.protocolVersion(), HttpResponseStatus.valueOf(status), false, false);
    var out = head.headers();
    for (HttpField f : answer) {
      out.add(f.getName(), f.getValue());
    }
    out.set("Date", NettyConnection.date());
    boolean framed =
        answer.contains(HttpHeader.CONTENT_LENGTH) || answer.contains(HttpHeader.TRANSFER_ENCODING);
    if (!framed && !bodiless()) {
      if (last) {
        out.set("Content-Length", length);
      } else {
        closeAfter = true; // only the close can end it
      }
    }
    if (answer.contains(HttpHeader.CONNECTION, "close")
        || !keepAliveAsked
        || connection.stopping()) {
      closeAfter = true;
    }
    out.remove("Connection");
    if (closeAfter) {
      out.set("Connection", "close");
    } else if (!http11()) {
      out.set("Connection", "keep-alive");
    }
    return head;
  }

  void expectContinue() {
    expectsContinue = true;
  }

  boolean expectsContinue() {
    return expectsContinue && !committed;
  }

  void continued() {
    expectsContinue = false;
  }

  /** Whether the connection closes after this answer: on the loop only, once the head went out. */
  boolean closeAfter() {
    return closeAfter;
  }

  @Override
  public boolean committed() {
    return committedSeen;
  }

  @Override
  public void end(@Nullable Throwable failure) {
    connection.onLoop(() -> connection.ended(this, failure));
  }

  /** For logs: never the query nor a field. */
  @Override
  public String toString() {
    return "NettyHop[" + method() + " " + Logs.safe(path()) + "]";
  }
}
