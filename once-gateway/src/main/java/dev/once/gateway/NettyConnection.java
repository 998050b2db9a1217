package dev.once.gateway;

import dev.once.http.Headers;
import dev.once.http.Problems;
import dev.once.http.StoredResponse;
import io.netty.buffer.Unpooled;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.ChannelInputShutdownEvent;
import io.netty.handler.codec.DateFormatter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.DefaultHttpResponse;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpObject;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.handler.codec.http.TooLongHttpHeaderException;
import io.netty.handler.codec.http.TooLongHttpLineException;
import io.netty.handler.timeout.IdleStateEvent;
import io.netty.util.ReferenceCountUtil;
import java.io.IOException;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;
import java.util.Date;
import java.util.Map;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.UriCompliance;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One client connection to the Netty core: its requests one at a time, each a {@link NettyHop}
 * handed to the {@link ProxyHandler} chain. Everything here runs on the connection's loop.
 *
 * <p>The socket is read only when something waits for bytes (the next request's head, once the
 * current request is in whole, or a body a reader asked for): a client that sends ahead (pipelines)
 * waits in its own socket buffer beyond what one read brought, and a slow reader of a body slows
 * its sender. The chain starts once the read that brought a head is done, with the body bytes that
 * came in the same read: a small body is then read whole without a wait, as Jetty's parser delivers
 * it.
 *
 * <p>What the decoder refuses (a head over the limit, a malformed line or field) and what Jetty's
 * server refuses on its own (a target that is not a canonical path, an HTTP/1.1 request without a
 * single {@code Host}, an expectation other than {@code 100-continue}) is answered here as an RFC
 * 9457 problem with the status's reason, and the connection closes, as the {@link ProblemErrors} of
 * the Jetty core answer it.
 */
final class NettyConnection extends ChannelInboundHandlerAdapter implements NettyBody.Reads {

  private static final Logger log = LoggerFactory.getLogger(NettyConnection.class);

  private final NettyProxy server;
  private final ProxyHandler chain;
  private final ProxyLog served;

  private volatile @Nullable ChannelHandlerContext ctx;
  private volatile @Nullable NettyTimers timers;

  /** The request being served; null between requests. */
  private @Nullable NettyHop current;

  /** The current request's head arrived in the read now under way: start it when it is done. */
  private boolean startPending;

  /** What the decoder gave beyond the current request (a pipelining client's next ones). */
  private final ArrayDeque<HttpObject> ahead = new ArrayDeque<>();

  /** The client shut its side: no request comes after those already read. */
  private boolean inputShut;

  NettyConnection(NettyProxy server, ProxyHandler chain, ProxyLog served) {
    this.server = server;
    this.chain = chain;
    this.served = served;
  }

  EventLoop loop() {
    return context().channel().eventLoop();
  }

  NettyTimers timers() {
    NettyTimers t = timers;
    if (t == null) {
      throw new IllegalStateException("not yet registered");
    }
    return t;
  }

  SocketAddress peer() {
    return context().channel().remoteAddress();
  }

  boolean open() {
    return context().channel().isActive();
  }

  boolean stopping() {
    return server.stopping();
  }

  /** Whether no request is being served: on the loop only. */
  boolean idle() {
    return current == null;
  }

  private ChannelHandlerContext context() {
    ChannelHandlerContext c = ctx;
    if (c == null) {
      throw new IllegalStateException("not yet registered");
    }
    return c;
  }

  /** Runs {@code task} on the loop: at once if this is the loop, else after what is queued. */
  void onLoop(Runnable task) {
    EventLoop loop = loop();
    if (loop.inEventLoop()) {
      task.run();
    } else {
      loop.execute(task);
    }
  }

  void write(Object message) {
    context().write(message, context().voidPromise());
  }

  ChannelFuture writeAndFlush(Object message) {
    return context().writeAndFlush(message);
  }

  @Override
  public void handlerAdded(ChannelHandlerContext ctx) {
    this.ctx = ctx;
    this.timers = new NettyTimers(ctx.channel().eventLoop());
  }

  @Override
  public void channelActive(ChannelHandlerContext ctx) {
    server.opened(ctx.channel());
    ctx.read();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object message) {
    if (!(message instanceof HttpObject object)) {
      ReferenceCountUtil.release(message);
      return;
    }
    NettyHop hop = current;
    if (hop != null
        && ahead.isEmpty()
        && object instanceof HttpContent content
        && hop.requestBody().takes()) {
      hop.requestBody().arrived(content);
    } else if (hop == null && ahead.isEmpty() && object instanceof HttpRequest request) {
      begin(request);
    } else {
      ahead.add(object);
    }
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    NettyHop hop = current;
    if (startPending && hop != null) {
      startPending = false;
      start(hop);
      hop = current; // the chain may have ended it, and gone on to a next request
    }
    if (readsOn(hop)) {
      ctx.read();
    }
  }

  /**
   * Whether a read that just ended is followed by another: for the body a reader waits for, or,
   * between requests and once the current request is in whole, for the next head. Reading on while
   * a request is served keeps the socket's read interest armed from one request to the next (the
   * selector's interest would change twice a request otherwise: two system calls a request, which
   * the plain proxy's CPU a request shows, measured in {@code docs/benchmarks.md}) and learns of a
   * client's close at once. Once a read has brought a next request's head (or the decoder's refusal
   * of one), it waits in {@link #ahead} and nothing more is read until its turn; before that, the
   * decoder holds at most the head limit of it.
   */
  private boolean readsOn(@Nullable NettyHop hop) {
    if (hop != null && hop.requestBody().takes()) {
      return hop.requestBody().wanted();
    }
    return !inputShut && ahead.isEmpty();
  }

  @Override
  public void readMore(NettyBody body) {
    onLoop(
        () -> {
          NettyHop hop = current;
          if (hop != null && hop.requestBody() == body && !startPending) {
            if (!body.complete() && hop.expectsContinue()) {
              hop.continued();
              context()
                  .writeAndFlush(
                      new DefaultFullHttpResponse(
                          HttpVersion.HTTP_1_1,
                          HttpResponseStatus.CONTINUE,
                          Unpooled.EMPTY_BUFFER));
            }
            context().read();
          }
        });
  }

  @Override
  public void userEventTriggered(ChannelHandlerContext ctx, Object event) {
    if (event instanceof ChannelInputShutdownEvent) {
      inputShut = true;
      NettyHop hop = current;
      if (hop == null) {
        if (ahead.isEmpty()) {
          ctx.close();
        }
      } else {
        hop.requestBody().broken(NettyBody.early());
      }
    } else if (event instanceof IdleStateEvent) {
      // Nothing moved for the idle timeout, which is longer than the upstream's: between requests,
      // or with an answer the client does not take.
      NettyHop hop = current;
      if (hop == null || hop.committed()) {
        ctx.close();
      }
    } else {
      ctx.fireUserEventTriggered(event);
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    server.closed(ctx.channel());
    NettyHop hop = current;
    if (hop != null) {
      hop.requestBody().broken(NettyBody.early());
    }
    for (HttpObject o = ahead.poll(); o != null; o = ahead.poll()) {
      ReferenceCountUtil.release(o);
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    // A reset or a broken pipe: the client went away. A request in flight learns it from its body
    // or its next write. Anything else is a defect of the core's, and cuts only this connection.
    if (cause instanceof IOException) {
      log.debug("client connection failed: {}", Logs.failure(cause));
    } else {
      log.error("serving a client connection failed", cause);
    }
    ctx.close();
  }

  /** A head arrived: its request becomes the current one, started when the read is done. */
  private void begin(HttpRequest request) {
    if (request.decoderResult().isFailure()) {
      refuse(request, problemOf(request.decoderResult().cause()));
      return;
    }
    HttpURI target;
    try {
      // Jetty's parser, as the Jetty core's: a path that escapes its root, or is ambiguous once
      // decoded, is refused rather than matched against a route in one spelling and sent in
      // another.
      target = HttpURI.build(request.uri());
    } catch (IllegalArgumentException e) {
      refuse(request, Problems.forStatus(400, null));
      return;
    }
    String decoded = target.getCanonicalPath();
    if (decoded == null
        || target.getPath() == null
        || UriCompliance.checkUriCompliance(UriCompliance.DEFAULT, target, null) != null) {
      refuse(request, Problems.forStatus(400, null));
      return;
    }
    Headers.Builder fields = Headers.builder();
    for (Map.Entry<String, String> f : request.headers()) {
      fields.add(f.getKey(), f.getValue());
    }
    boolean http11 = request.protocolVersion().equals(HttpVersion.HTTP_1_1);
    if (http11 && request.headers().getAll(HttpHeaderNames.HOST).size() != 1) {
      refuse(request, Problems.forStatus(400, null));
      return;
    }
    String expect = request.headers().get(HttpHeaderNames.EXPECT);
    if (expect != null && !HttpHeaderValues.CONTINUE.contentEqualsIgnoreCase(expect)) {
      refuse(request, Problems.forStatus(417, null));
      return;
    }
    boolean chunked = HttpUtil.isTransferEncodingChunked(request);
    long declared = chunked ? -1 : HttpUtil.getContentLength(request, -1L);
    boolean none = !chunked && declared <= 0;
    NettyBody body = new NettyBody(declared, none, this);
    NettyHop hop =
        new NettyHop(this, request, target.asImmutable(), decoded, fields.build(), declared, body);
    if (http11 && expect != null && !none) {
      hop.expectContinue();
    }
    server.began();
    current = hop;
    startPending = true;
  }

  /**
   * Starts the chain. The chain answers its own failures; what escapes it is a defect, answered 500
   * (or, once the answer began, cut), as Jetty's server answers it.
   */
  private void start(NettyHop hop) {
    try {
      chain.handle(hop);
    } catch (RuntimeException | Error e) {
      log.error("proxying {} failed", hop, e);
      if (hop.committed()) {
        hop.end(e);
        return;
      }
      StoredResponse problem = Problems.forStatus(500, null);
      hop.status(problem.status());
      hop.answerFields().clear();
      for (Headers.Field f : problem.headers()) {
        hop.answerFields().add(f.name(), f.value());
      }
      hop.answerFields().put("Connection", "close");
      hop.write(
          true, ByteBuffer.wrap(problem.body()), Callback.from(() -> hop.end(null), hop::end));
    }
  }

  /**
   * The current request is over: logged, and the connection goes on to the next one or closes (the
   * answer was cut, it said so, or the body was not read to its end).
   */
  void ended(NettyHop hop, @Nullable Throwable failure) {
    if (current != hop) {
      return;
    }
    current = null;
    server.finished();
    try {
      served.served(
          hop.method(), hop.path(), hop.status(), hop.replayed(), hop.beganNanos, server.port());
    } catch (RuntimeException e) {
      log.warn("logging a request failed", e);
    }
    ChannelHandlerContext c = context();
    if (failure != null || hop.closeAfter() || !hop.requestBody().complete() || stopping()) {
      hop.requestBody().consumeAvailable();
      c.close();
      return;
    }
    next();
  }

  /** Serves the next request the client already sent, or reads for one. */
  private void next() {
    HttpObject first = ahead.poll();
    if (first == null) {
      if (inputShut) {
        context().close();
      } else {
        context().read();
      }
      return;
    }
    // A body's pieces follow its head, so what waits first is a head.
    begin((HttpRequest) first);
    NettyHop hop = current;
    if (hop == null) {
      return; // refused
    }
    while (ahead.peek() instanceof HttpContent content && hop.requestBody().takes()) {
      ahead.poll();
      hop.requestBody().arrived(content);
    }
    if (inputShut && !hop.requestBody().complete()) {
      hop.requestBody().broken(NettyBody.early());
    }
    startPending = false;
    start(hop);
  }

  /** Answers a request the server refuses before the chain sees it, and closes the connection. */
  private void refuse(HttpRequest request, StoredResponse problem) {
    ReferenceCountUtil.release(request);
    boolean head = request.method().name().equals("HEAD");
    HttpResponseStatus status = HttpResponseStatus.valueOf(problem.status());
    var answer =
        head
            ? new DefaultHttpResponse(HttpVersion.HTTP_1_1, status)
            : new DefaultFullHttpResponse(
                HttpVersion.HTTP_1_1, status, Unpooled.wrappedBuffer(problem.body()));
    for (Headers.Field f : problem.headers()) {
      answer.headers().add(f.name(), f.value());
    }
    answer.headers().set("Content-Length", problem.body().length);
    answer.headers().set("Connection", "close");
    answer.headers().set("Date", date());
    long began = System.nanoTime();
    ChannelHandlerContext c = context();
    if (head) {
      c.write(answer);
    }
    c.writeAndFlush(head ? LastHttpContent.EMPTY_LAST_CONTENT : answer)
        .addListener(ChannelFutureListener.CLOSE);
    inputShut = true; // nothing after a refused head can be read as a request
    try {
      String uri = request.uri();
      int query = uri.indexOf('?');
      served.served(
          request.method().name(),
          query < 0 ? uri : uri.substring(0, query),
          problem.status(),
          false,
          began,
          server.port());
    } catch (RuntimeException e) {
      log.warn("logging a request failed", e);
    }
  }

  /**
   * What a request the decoder refused is answered: 414 and 431 for a line or a header section over
   * the limit, the gateway's own problem for a method that is no token (Netty's decoder refuses it
   * where Jetty's parser passed it on to {@link ProxyHandler}; the one answer either way), else
   * 400.
   */
  private static StoredResponse problemOf(Throwable cause) {
    if (cause instanceof TooLongHttpLineException) {
      return Problems.forStatus(414, null);
    }
    if (cause instanceof TooLongHttpHeaderException || cause instanceof TooLongFrameException) {
      return Problems.forStatus(431, null);
    }
    if (cause instanceof IllegalArgumentException
        && String.valueOf(cause.getMessage()).startsWith("Illegal character in HTTP Method")) {
      return GatewayProblem.METHOD_MALFORMED.response();
    }
    return Problems.forStatus(400, null);
  }

  /** Whether the client asked to keep the connection (HTTP/1.1 unless it said close). */
  static boolean keepAlive(HttpRequest request) {
    return HttpUtil.isKeepAlive(request);
  }

  private static volatile DateStamp date = new DateStamp(0, "");

  /** The {@code Date} of an answer: formatted once a second, as Jetty's server does. */
  static String date() {
    long second = System.currentTimeMillis() / 1000;
    DateStamp d = date;
    if (d.second != second) {
      d = new DateStamp(second, DateFormatter.format(new Date(second * 1000)));
      date = d;
    }
    return d.text;
  }

  private record DateStamp(long second, String text) {}
}
