package dev.once.gateway;

import dev.once.http.Headers;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.DefaultHttpContent;
import io.netty.handler.codec.http.DefaultLastHttpContent;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpResponse;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.LastHttpContent;
import io.netty.util.ReferenceCountUtil;
import io.netty.util.concurrent.ScheduledFuture;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.eclipse.jetty.io.Content;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One request on its way upstream over {@link NettyUpstream}, and its answer on the way back to its
 * {@link UpstreamResponse}. Everything here runs on the request's event loop, the one its
 * connection lives on; what the rules call from another thread (their demand, an abort) is handed
 * to it.
 *
 * <p>It reports {@link UpstreamResponse#sent} as the request is handed to a connection, before its
 * first byte is written, so that a reused connection that turns out broken leaves the outcome
 * ambiguous; {@link UpstreamResponse#began} when a status line was read, {@link
 * UpstreamResponse#head} when the final answer's fields were; each piece of the body when the rules
 * asked for it; and {@link UpstreamResponse#complete} exactly once, however it ends.
 *
 * <p>An answer that is complete before the request is (an upstream that answers without reading the
 * whole body) ends the exchange: the rest of the request is not sent, and the connection is closed.
 */
final class NettyUpstreamExchange implements UpstreamResponse.UpstreamCall {

  private static final Logger log = LoggerFactory.getLogger(NettyUpstreamExchange.class);

  private final ProxyExchange exchange;
  private final UpstreamResponse rules;
  private final NettyUpstream.Lane lane;
  private final EventLoop loop;
  private final HttpRequest request;
  private final boolean head;

  /** The client's body, streamed as it arrives; null if the request went whole or has none. */
  private final Content.@Nullable Source source;

  private final @Nullable BodyPace pace;

  /** Asks for the next piece of the answer; handed to the rules with every piece. */
  private final Runnable demander = this::demand;

  /** Goes on with the body once the client sent more; handed to its demand. */
  private final Runnable resumer = this::resume;

  private @Nullable NettyUpstreamConnection connection;
  private @Nullable ScheduledFuture<?> timer;
  private boolean queued;
  private volatile boolean finished;

  /** The whole request was written: the connection is at a request's end. */
  private boolean written;

  /** The body's last piece was read from the client (or it had none to stream). */
  private boolean bodyEnded;

  /** The pump waits for the channel to become writable. */
  private boolean blocked;

  /** An interim answer (100, 102, 103) was read: its empty end is no part of the final one. */
  private boolean interim;

  /** The final answer's head arrived. */
  private boolean answered;

  /** The answer lets the connection carry another request (HTTP/1.1, no close). */
  private boolean keepAlive;

  /** The rules want the connection closed after this answer. */
  private volatile boolean closeAfter;

  /** Pieces of the body read and not yet handed to the rules, who did not ask for them yet. */
  private final ArrayDeque<HttpContent> pending = new ArrayDeque<>();

  /** The last piece of the body was read (it may still wait in {@link #pending}). */
  private boolean ended;

  /** The rules asked for the next piece. */
  private boolean demanded = true;

  private boolean delivering;

  NettyUpstreamExchange(
      ProxyExchange exchange,
      UpstreamResponse rules,
      NettyUpstream.Lane lane,
      HttpRequest request,
      long bodyGraceNanos,
      long minBodyRate) {
    this.exchange = exchange;
    this.rules = rules;
    this.lane = lane;
    this.loop = lane.loop;
    this.request = request;
    this.head = request.method().equals(HttpMethod.HEAD);
    boolean streams = !(request instanceof FullHttpRequest);
    this.source = streams ? exchange.hop.body() : null;
    this.bodyEnded = !streams;
    this.pace =
        streams && minBodyRate > 0
            ? new BodyPace(exchange.hop.scheduler(), bodyGraceNanos, minBodyRate, this::fellBehind)
            : null;
  }

  /** Starts the exchange's clock, and finds it a connection; on the loop. */
  void start(long timeoutMillis) {
    timer =
        loop.schedule(
            () ->
                finish(
                    new TimeoutException(
                        "no complete answer from the upstream within " + timeoutMillis + " ms")),
            timeoutMillis,
            TimeUnit.MILLISECONDS);
    try {
      lane.acquire(this);
    } catch (RuntimeException | Error e) {
      finish(e); // no connection could be had: nothing was sent
    }
  }

  boolean finished() {
    return finished;
  }

  /** Whether the request is a HEAD, whose answer has no body. */
  boolean head() {
    return head;
  }

  void queued(boolean queued) {
    this.queued = queued;
  }

  /** No connection could be had or opened: nothing was sent. */
  void fail(Throwable failure) {
    finish(failure);
  }

  /** Sends the request on {@code carrier}. */
  void use(NettyUpstreamConnection carrier) {
    connection = carrier;
    carrier.carry(this);
    try {
      rules.sent();
    } catch (RuntimeException | Error e) {
      finish(e);
      return;
    }
    Channel channel = carrier.channel();
    // Read from the start: an answer may come before the request is whole.
    carrier.read();
    if (source == null) {
      channel.writeAndFlush(request).addListener((ChannelFuture done) -> wrote(done, true));
      return;
    }
    channel.write(request).addListener((ChannelFuture done) -> wrote(done, false));
    pump();
  }

  /** A write ended; {@code end} says whether it was the request's last. */
  private void wrote(ChannelFuture done, boolean end) {
    if (!done.isSuccess()) {
      writeFailed(done.cause());
    } else if (end) {
      written = true;
    }
  }

  /**
   * Streams the client's body upstream as it comes, one piece at a time: the next is read only once
   * the last was written, and only while the connection takes more (a slow upstream slows the
   * client, never fills memory).
   */
  private void pump() {
    NettyUpstreamConnection carrier = connection;
    Content.Source body = source;
    if (finished || carrier == null || body == null || bodyEnded) {
      return;
    }
    try {
      pump(carrier.channel(), body);
    } catch (RuntimeException | Error e) {
      // Thrown into a listener, Netty would only log it: the exchange must end.
      finish(e);
    }
  }

  private void pump(Channel channel, Content.Source body) {
    while (true) {
      if (!channel.isWritable()) {
        blocked = true;
        channel.flush();
        return;
      }
      Content.Chunk chunk = body.read();
      if (chunk == null) {
        channel.flush();
        body.demand(pace == null ? resumer : pace.demanding(resumer));
        return;
      }
      if (Content.Chunk.isFailure(chunk)) {
        // The client's fault: UpstreamResponse answers 400, not 502.
        exchange.bodyFailed(GatewayProblem.REQUEST_BODY_MALFORMED);
        finish(chunk.getFailure());
        return;
      }
      boolean last = chunk.isLast();
      if (pace != null) {
        pace.read(chunk.remaining());
        if (last) {
          pace.stop();
        }
      }
      if (last) {
        bodyEnded = true;
      }
      if (!chunk.hasRemaining() && !last) {
        chunk.release();
        continue;
      }
      ByteBuf bytes =
          chunk.hasRemaining()
              ? Unpooled.wrappedBuffer(chunk.getByteBuffer())
              : Unpooled.EMPTY_BUFFER;
      HttpContent piece = last ? new DefaultLastHttpContent(bytes) : new DefaultHttpContent(bytes);
      channel
          .writeAndFlush(piece)
          .addListener(
              (ChannelFuture done) -> {
                chunk.release();
                wrote(done, last);
                if (done.isSuccess() && !last) {
                  pump();
                }
              });
      return;
    }
  }

  private void resume() {
    onLoop(this::pump);
  }

  /** The connection takes more again. */
  void writable() {
    if (blocked) {
      blocked = false;
      pump();
    }
  }

  /** The client fell behind the pace its body must keep: cut, and answered 408. */
  private void fellBehind() {
    exchange.bodyFailed(GatewayProblem.REQUEST_BODY_TIMEOUT);
    abort(new TimeoutException("the request body fell behind its pace"));
  }

  /**
   * The request could not be written whole. An answer already read in full still stands; else the
   * exchange fails, the request sent.
   */
  private void writeFailed(Throwable cause) {
    if (!ended) {
      finish(cause);
    }
  }

  /** What the decoder read; the connection hands it here. */
  void received(Object msg) {
    NettyUpstreamConnection carrier = connection;
    try {
      if (finished || carrier == null) {
        ReferenceCountUtil.release(msg);
      } else if (msg instanceof HttpResponse response) {
        answer(response, carrier);
      } else if (msg instanceof HttpContent content) {
        content(content, carrier);
      } else {
        // Raw bytes after an upgrade the rules refuse: no part of any answer.
        ReferenceCountUtil.release(msg);
      }
    } catch (RuntimeException | Error e) {
      finish(e);
    }
  }

  /**
   * The decoder read a status line, before the fields that follow it: the upstream acted, as
   * Jetty's client tells when a response begins.
   */
  void statusLine() {
    if (!finished) {
      rules.began();
    }
  }

  private void answer(HttpResponse response, NettyUpstreamConnection carrier) {
    DecoderResult result = response.decoderResult();
    if (result.isFailure()) {
      // A broken status line, or broken fields after one (then the upstream began its answer).
      ReferenceCountUtil.release(response);
      finish(result.cause());
      return;
    }
    int status = response.status().code();
    if (status == 100 || status == 102 || status == 103) {
      interim = true; // consumed, as an intermediary may; the final answer follows
      return;
    }
    answered = true;
    keepAlive = HttpUtil.isKeepAlive(response);
    rules.head(this, status, fieldsOf(response, carrier));
  }

  private Headers fieldsOf(HttpResponse response, NettyUpstreamConnection carrier) {
    Headers.Builder fields = Headers.builder();
    Iterator<Map.Entry<CharSequence, CharSequence>> all = response.headers().iteratorCharSequence();
    while (all.hasNext()) {
      Map.Entry<CharSequence, CharSequence> f = all.next();
      fields.add(f.getKey().toString(), f.getValue().toString());
    }
    for (String value : carrier.droppedTransferEncoding()) {
      fields.add(HttpHeaderNames.TRANSFER_ENCODING.toString(), value);
    }
    return fields.build();
  }

  private void content(HttpContent content, NettyUpstreamConnection carrier) {
    DecoderResult result = content.decoderResult();
    if (result.isFailure()) {
      content.release();
      finish(result.cause());
      return;
    }
    if (interim) {
      interim = false; // the empty end of the interim answer
      content.release();
      return;
    }
    if (content instanceof LastHttpContent) {
      ended = true;
    }
    pending.addLast(content);
    deliver(carrier);
  }

  private void demand() {
    onLoop(this::demanded);
  }

  private void demanded() {
    demanded = true;
    NettyUpstreamConnection carrier = connection;
    if (carrier != null) {
      deliver(carrier);
    }
  }

  /**
   * Hands the rules the pieces they asked for, one per demand; once the last was taken the answer
   * is complete. A demand the rules make while they take a piece is served by the loop here, not by
   * a nested call.
   */
  private void deliver(NettyUpstreamConnection carrier) {
    if (delivering) {
      return;
    }
    delivering = true;
    try {
      while (!finished && demanded) {
        HttpContent next = pending.pollFirst();
        if (next == null) {
          if (ended) {
            finish(null);
          } else {
            carrier.read();
          }
          return;
        }
        ByteBuf bytes = next.content();
        if (!bytes.isReadable()) {
          next.release();
          continue;
        }
        demanded = false;
        Content.Chunk chunk = NettyChunks.of(bytes.retain(), next instanceof LastHttpContent);
        next.release();
        try {
          rules.content(this, chunk, demander);
        } finally {
          chunk.release();
        }
      }
    } finally {
      delivering = false;
    }
  }

  /**
   * A read ended: the socket is asked for more if the head is still to come, or the rules wait for
   * the next piece.
   */
  void readComplete() {
    NettyUpstreamConnection carrier = connection;
    if (carrier != null && !finished && (!answered || (demanded && pending.isEmpty() && !ended))) {
      carrier.read();
    }
  }

  /** The connection closed. An answer already read in full still stands. */
  void closed() {
    if (!ended) {
      finish(new IOException("the upstream closed the connection before its answer was complete"));
    }
  }

  /** The connection failed (a reset, a decoder's defect). */
  void broke(Throwable cause) {
    if (!ended) {
      finish(cause);
    }
  }

  @Override
  public void abort(Throwable failure) {
    onLoop(() -> finish(failure));
  }

  @Override
  public void closeAfter() {
    closeAfter = true;
  }

  /**
   * Ends the exchange, once: the connection goes back to its loop's pool if it can carry another
   * request, else closes; then the rules learn how it ended.
   */
  private void finish(@Nullable Throwable failure) {
    if (finished) {
      return;
    }
    finished = true;
    if (timer != null) {
      timer.cancel(false);
    }
    if (pace != null) {
      pace.stop();
    }
    HttpContent unread;
    while ((unread = pending.pollFirst()) != null) {
      unread.release();
    }
    if (queued) {
      lane.leave(this);
    }
    NettyUpstreamConnection carrier = connection;
    if (carrier != null) {
      carrier.done();
      if (failure == null && written && keepAlive && !closeAfter) {
        // Once the read that ended this answer is over: bytes it still holds break the connection.
        try {
          loop.execute(() -> lane.release(carrier, true));
        } catch (RejectedExecutionException stopping) {
          carrier.close();
        }
      } else {
        carrier.close();
      }
    }
    Content.Source body = source;
    if (failure != null && body != null && !bodyEnded) {
      // As Jetty fails a request's content: the client's body is not read any further.
      try {
        body.fail(failure);
      } catch (RuntimeException e) {
        log.debug("failing the request body of {} failed", exchange, e);
      }
    }
    try {
      rules.complete(failure);
    } catch (RuntimeException | Error e) {
      log.error("ending {} failed", exchange, e);
    }
  }

  private void onLoop(Runnable task) {
    if (loop.inEventLoop()) {
      task.run();
    } else {
      loop.execute(task);
    }
  }
}
