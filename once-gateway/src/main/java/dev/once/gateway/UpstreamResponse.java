package dev.once.gateway;

import dev.once.http.StoredResponse;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jetty.client.Request;
import org.eclipse.jetty.client.Response;
import org.eclipse.jetty.client.Result;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The upstream's answer to one {@link ProxyExchange}, and how the exchange ends because of it.
 *
 * <p>The body is held until it is complete, so the whole response can be recorded before the client
 * sees any of it. Held bytes count against the route's response cap (the body only, never the
 * headers) and the gateway's {@link BufferBudget}; past either, the response <em>streams</em>: what
 * was held goes to the client, then each chunk as it comes, the upstream asked for the next one
 * only once the client took the last (so a slow client slows the upstream, never fills memory). A
 * streamed response counts as done without a stored response (a transient status releases the key,
 * as any transient answer does), recorded before its first byte goes out, so the outcome stands
 * whatever happens to the stream: a client that goes away in the middle changes nothing.
 *
 * <p>Failures are judged by whether the request may have reached the upstream: before it was handed
 * to a connection, nothing did (the key is released); after, something may have, even on a reused
 * connection that turns out broken, so the key is abandoned to its lease.
 */
final class UpstreamResponse implements Response.AsyncContentListener, Response.CompleteListener {

  private static final Logger log = LoggerFactory.getLogger(UpstreamResponse.class);

  private final ProxyExchange exchange;
  private final int maxHeaderBytes;
  private final int cap;
  private volatile boolean sent;
  private byte[] buffer = new byte[0];
  private int size;
  private volatile boolean streaming;

  /** The client's writes, one after the other: Jetty allows one pending write per response. */
  private CompletableFuture<Void> writes = CompletableFuture.completedFuture(null);

  UpstreamResponse(ProxyExchange exchange, int maxHeaderBytes) {
    this.exchange = exchange;
    this.maxHeaderBytes = maxHeaderBytes;
    this.cap = exchange.route.policy().execution().maxResultBytes();
  }

  /** The request was handed to a connection: from now on the upstream may act on it. */
  void sent(Request request) {
    sent = true;
  }

  /**
   * Headers over the limit cannot be delivered (the client's hop allows no more), so they must not
   * be recorded either: the response is cut here, and counts as done without a stored response.
   */
  void headers(Response response) {
    long bytes = 16; // the status line
    for (HttpField f : response.getHeaders()) {
      bytes += f.getName().length() + f.getValue().length() + 4;
    }
    if (bytes > maxHeaderBytes) {
      response.abort(new HeadersTooLarge(bytes));
    }
  }

  @Override
  public void onContent(Response response, Content.Chunk chunk, Runnable demander) {
    if (streaming) {
      stream(response, chunk, demander);
      return;
    }
    ByteBuffer bytes = chunk.getByteBuffer();
    int n = bytes.remaining();
    if (size + n <= cap && grow(size + n)) {
      bytes.get(buffer, size, n);
      size += n;
      demander.run();
      return;
    }
    streaming = true;
    // The upstream has answered, so its effect happened, and a body this large is never stored.
    // Record that before the first byte goes to the client: a client holding the whole body may
    // retry at once, and must learn that this response is gone (409 response-unavailable), not that
    // the request still runs. Writes wait for the record; a second settle only finishes the answer.
    CompletableFuture<Void> recorded = new CompletableFuture<>();
    exchange.settle(Endings.streamed(response.getStatus()), () -> recorded.complete(null));
    synchronized (this) {
      writes = writes.thenCompose(v -> recorded);
    }
    exchange.writeHead(
        response.getStatus(),
        ProxyExchange.headersOf(response.getHeaders()),
        response.getHeaders().getLongField("Content-Length"));
    write(false, ByteBuffer.wrap(buffer, 0, size));
    stream(response, chunk, demander);
  }

  @Override
  public void onComplete(Result result) {
    Response response = result.getResponse();
    if (result.isFailed()) {
      failed(result.getFailure());
    } else if (streaming) {
      // Recorded when streaming began; this settle only completes the answer.
      write(true, BufferUtil.EMPTY_BUFFER)
          .whenComplete(
              (v, failure) ->
                  exchange.settle(Endings.UNAVAILABLE, () -> exchange.complete(failure)));
    } else {
      StoredResponse answer =
          new StoredResponse(
              response.getStatus(),
              ProxyExchange.headersOf(response.getHeaders()),
              size == buffer.length ? buffer : Arrays.copyOf(buffer, size));
      exchange.settle(Endings.record(answer), () -> exchange.answer(answer));
    }
  }

  /** The exchange failed before a complete response; see the class comment for how it ends. */
  void failed(Throwable failure) {
    if (streaming) {
      // Part of the response went out: the upstream did its work, the client has a cut answer.
      exchange.settle(Endings.UNAVAILABLE, () -> exchange.complete(failure));
      return;
    }
    if (failure instanceof HeadersTooLarge) {
      log.warn(
          "upstream answered {} {} with {}",
          exchange.method,
          Logs.safe(exchange.path),
          failure.getMessage());
      exchange.settle(
          Endings.UNAVAILABLE,
          () -> exchange.answer(GatewayProblem.UPSTREAM_HEADERS_TOO_LARGE.response()));
      return;
    }
    GatewayProblem problem = GatewayProblem.ofUpstream(failure, sent);
    log.warn(
        "{} for {} {}: {}",
        problem.name().toLowerCase(Locale.ROOT).replace('_', ' '),
        exchange.method,
        Logs.safe(exchange.path),
        failure.toString());
    exchange.settle(
        problem.ambiguous() ? Endings.AMBIGUOUS : Endings.NOT_SENT,
        () -> exchange.answer(problem.response()));
  }

  /**
   * Sends one chunk on to the client, and asks the upstream for the next once the client took it.
   */
  private void stream(Response response, Content.Chunk chunk, Runnable demander) {
    chunk.retain();
    write(false, chunk.getByteBuffer())
        .whenComplete(
            (v, failure) -> {
              chunk.release();
              if (failure == null) {
                demander.run();
              } else {
                // The client went away: stop reading the upstream; onComplete then finishes the
                // exchange.
                response.abort(failure);
              }
            });
  }

  private synchronized CompletableFuture<Void> write(boolean last, ByteBuffer bytes) {
    writes =
        writes.thenCompose(
            v -> {
              Callback.Completable done = new Callback.Completable();
              exchange.response.write(last, bytes, done);
              return done;
            });
    return writes;
  }

  private boolean grow(int needed) {
    if (needed <= buffer.length) {
      return true;
    }
    int capacity = BufferBudget.grow(buffer.length, needed, cap, exchange::reserveResponse);
    if (capacity < 0) {
      return false;
    }
    buffer = Arrays.copyOf(buffer, capacity);
    return true;
  }

  /** The upstream's header section is larger than the gateway delivers. */
  private static final class HeadersTooLarge extends RuntimeException {
    private static final long serialVersionUID = 1L;

    HeadersTooLarge(long bytes) {
      super("response headers of " + bytes + " bytes, over the limit", null, false, false);
    }
  }
}
