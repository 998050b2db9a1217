package dev.once.gateway;

import dev.once.http.Headers;
import dev.once.http.StoredResponse;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The upstream's answer to one {@link ProxyExchange}, and how the exchange ends because of it.
 *
 * <p>The body of a guarded response is held until it is complete, so the whole response can be
 * recorded before the client sees any of it; the response to a request without a lease streams from
 * its first byte. Held bytes count against the route's response cap (the body only, never the
 * headers) and the gateway's {@link BufferBudget}; past either, the response <em>streams</em>: what
 * was held goes to the client, then each chunk as it comes, the upstream asked for the next one
 * only once the client took the last (so a slow client slows the upstream, never fills memory). A
 * streamed response counts as done without a stored response (a transient status releases the key,
 * as any transient answer does), recorded before its first byte goes out, so the outcome stands
 * whatever happens to the stream: a client that goes away in the middle changes nothing.
 *
 * <p>Failures are judged by whether the request may have reached the upstream: before it was handed
 * to a connection, nothing did (the key is released); after, something may have, even on a reused
 * connection that turns out broken, so the key is abandoned to its lease. Once the response's
 * status line has arrived the upstream acted: whatever fails afterwards (the body breaks off, the
 * status is no final one, a listener throws) ends the exchange as done without a stored response,
 * never as "maybe not run".
 *
 * <p>The answer is the head as it stood when it was complete ({@link #head}), never one read again
 * later: a client may parse bytes that arrive after a complete answer against the same exchange
 * (Jetty's does, while the request is still being sent: see {@link JettyUpstream}).
 *
 * <p>The client that carries the request reports its events here ({@link #sent}, {@link #began},
 * {@link #head}, {@link #content}, {@link #complete}) and is acted on through an {@link
 * UpstreamCall}. Each event catches what it throws and ends the exchange itself: a client that
 * drops a listener's failure (Jetty's does) would leave the client unanswered, the lease
 * heartbeated and the reservation held.
 */
final class UpstreamResponse {

  /** The request on its way upstream, as the client carrying it lets these rules act on it. */
  interface UpstreamCall {
    /**
     * Stops the exchange with the upstream: nothing more of its answer is read, the connection is
     * not used again, and {@link #complete} follows with {@code failure}.
     */
    void abort(Throwable failure);

    /**
     * The connection is not used for another request after this answer, which ends with its head:
     * see {@link #head}.
     */
    void closeAfter();
  }

  private static final Logger log = LoggerFactory.getLogger(UpstreamResponse.class);

  private final ProxyExchange exchange;
  private final int maxHeaderBytes;
  private final int cap;
  private volatile boolean sent;
  private volatile boolean began;

  /** The status and fields of the answer, taken when its head was complete; null before. */
  private volatile @Nullable Head head;

  /** The response's Content-Length, or -1: the buffer never grows past it. */
  private volatile long declaredLength = -1;

  private byte[] buffer = new byte[0];
  private int size;
  private volatile boolean streaming;

  /** Bytes of the body passed on while streaming (content callbacks come one at a time). */
  private long streamed;

  /**
   * Whether the write that ends the client's response went out with the body's last bytes: a small
   * streamed answer of known length then leaves in one write, head and body together.
   */
  private volatile boolean endWritten;

  /** The client's writes, one after the other: a hop takes one write at a time. */
  private CompletableFuture<Void> writes = CompletableFuture.completedFuture(null);

  UpstreamResponse(ProxyExchange exchange, int maxHeaderBytes) {
    this.exchange = exchange;
    this.maxHeaderBytes = maxHeaderBytes;
    this.cap = exchange.route.policy().execution().maxResultBytes();
  }

  /** The request was handed to a connection: from now on the upstream may act on it. */
  void sent() {
    sent = true;
  }

  /** The status line arrived: the upstream acted on the request. */
  void began() {
    began = true;
  }

  /**
   * The answer's head is complete; interim answers (100, 102, 103) never come here. A status that
   * is no final one (a 1xx that is not interim, or one outside 100-599) and headers over the limit
   * (the client's hop allows no more) cannot be delivered, so they must not be recorded either: the
   * response is cut here, and counts as done without a stored response.
   */
  void head(UpstreamCall call, int status, Headers fields) {
    try {
      if (status < 200 || status > 599) {
        call.abort(new Undeliverable(GatewayProblem.UPSTREAM_PROTOCOL_ERROR, "status " + status));
        return;
      }
      declaredLength = lengthOf(fields);
      closeAfterABodilessAnswerThatAnnouncesABody(call, status, fields);
      long bytes = 16; // the status line
      for (Headers.Field f : fields) {
        bytes += f.name().length() + f.value().length() + 4;
      }
      if (bytes > maxHeaderBytes) {
        call.abort(
            new Undeliverable(
                GatewayProblem.UPSTREAM_HEADERS_TOO_LARGE,
                "response headers of " + bytes + " bytes, over the limit"));
        return;
      }
      head = new Head(status, fields);
    } catch (RuntimeException | Error e) {
      call.abort(e);
    }
  }

  /**
   * The answer to a HEAD, a 204 and a 304 ends with its head (RFC 9112 section 6.3), whatever its
   * {@code Content-Length} or {@code Transfer-Encoding} say. Bytes an upstream sends after one are
   * no part of it, and on a pooled connection they would be parsed as the answer to the next
   * request sent there: another client's answer, recorded under its key and replayed. Where the
   * head announces a body, the gateway cannot tell an honest length (a HEAD's, a 304's) from such
   * bytes, so the connection is not reused.
   */
  private void closeAfterABodilessAnswerThatAnnouncesABody(
      UpstreamCall call, int status, Headers fields) {
    boolean bodiless = status == 204 || status == 304 || exchange.method.equals("HEAD");
    boolean announced = fields.first("Transfer-Encoding").isPresent() || declaredLength > 0;
    if (bodiless && announced) {
      call.closeAfter();
    }
  }

  /**
   * The length the head declares; -1 if it declares none. Both cores' parsers have already refused
   * a value that is no length, and several that differ.
   */
  private static long lengthOf(Headers fields) {
    String declared = fields.first("Content-Length").orElse(null);
    return declared == null ? -1 : Long.parseLong(declared.trim());
  }

  /**
   * A piece of the answer's body; {@code demander} asks for the next. The chunk is the client's
   * own: retained here for as long as it is needed beyond this call.
   */
  void content(UpstreamCall call, Content.Chunk chunk, Runnable demander) {
    try {
      take(call, chunk, demander);
    } catch (RuntimeException | Error e) {
      call.abort(e);
    }
  }

  private void take(UpstreamCall call, Content.Chunk chunk, Runnable demander) {
    if (streaming) {
      stream(call, chunk, demander);
      return;
    }
    ByteBuffer bytes = chunk.getByteBuffer();
    int n = bytes.remaining();
    // Only a guarded response is held, to be recorded before the client sees it; any other streams
    // at once (server-sent events arrive as they are sent) and holds no budget.
    if (exchange.guard() != null && size + n <= cap && grow(size + n)) {
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
    Head answer = headOf();
    CompletableFuture<Void> recorded = new CompletableFuture<>();
    exchange.settle(Endings.streamed(answer.status()), () -> recorded.complete(null));
    synchronized (this) {
      writes = writes.thenCompose(v -> recorded);
    }
    exchange.writeHead(answer.status(), answer.fields(), declaredLength);
    if (size > 0) {
      // An empty write would send the head on its own.
      streamed = size;
      write(false, ByteBuffer.wrap(buffer, 0, size));
    }
    stream(call, chunk, demander);
  }

  /** The exchange with the upstream ended: with the whole answer, or with {@code failure}. */
  void complete(@Nullable Throwable failure) {
    try {
      end(failure);
    } catch (RuntimeException | Error e) {
      log.error("ending {} failed", exchange, e);
      began = true; // the response arrived whole: the upstream acted
      failed(e);
    }
  }

  private void end(@Nullable Throwable failure) {
    if (failure != null) {
      failed(failure);
    } else if (streaming) {
      // Recorded when streaming began; this settle only completes the answer.
      CompletableFuture<Void> ended;
      synchronized (this) {
        ended = endWritten ? writes : write(true, BufferUtil.EMPTY_BUFFER);
      }
      ended.whenComplete(
          (v, cut) -> exchange.settle(Endings.UNAVAILABLE, () -> exchange.complete(cut)));
    } else {
      Head head = headOf();
      StoredResponse answer =
          new StoredResponse(
              head.status(),
              head.fields(),
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
    if (began) {
      GatewayProblem problem =
          failure instanceof Undeliverable undeliverable
              ? undeliverable.problem
              : GatewayProblem.UPSTREAM_RESPONSE_INCOMPLETE;
      log.warn(
          "upstream answered {} {} with {}: {}",
          exchange.method,
          Logs.safe(exchange.path),
          problem.name().toLowerCase(Locale.ROOT).replace('_', ' '),
          // The gateway's own reason, or only what failed: a message may carry the query.
          failure instanceof Undeliverable ? failure.getMessage() : Logs.failure(failure));
      exchange.settle(Endings.UNAVAILABLE, () -> answerOrCut(problem, failure));
      return;
    }
    GatewayProblem bodyFault = exchange.bodyFault();
    if (bodyFault != null) {
      // The client's body broke off or fell behind on its way upstream: its fault, answered 400 or
      // 408 (a body that streams holds no lease; were there one, the upstream had part of the
      // request). The rest of the body is unread: the connection closes.
      exchange.closeAfter();
      exchange.settle(Endings.AMBIGUOUS, () -> answerOrCut(bodyFault, failure));
      return;
    }
    GatewayProblem problem = GatewayProblem.ofUpstream(failure, sent);
    log.warn(
        "{} for {} {}: {}",
        problem.name().toLowerCase(Locale.ROOT).replace('_', ' '),
        exchange.method,
        Logs.safe(exchange.path),
        Logs.failure(failure));
    exchange.settle(
        problem.ambiguous() ? Endings.AMBIGUOUS : Endings.NOT_SENT,
        () -> exchange.answer(problem.response()));
  }

  /**
   * Sends one chunk on to the client, and asks the upstream for the next once the client took it.
   */
  private void stream(UpstreamCall call, Content.Chunk chunk, Runnable demander) {
    chunk.retain();
    ByteBuffer bytes = chunk.getByteBuffer();
    streamed += bytes.remaining();
    boolean end = declaredLength >= 0 && streamed >= declaredLength;
    if (end) {
      endWritten = true;
    }
    write(end, bytes)
        .whenComplete(
            (v, failure) -> {
              chunk.release();
              if (failure == null) {
                demander.run();
              } else {
                // The client went away: stop reading the upstream; complete then finishes the
                // exchange.
                call.abort(failure);
              }
            });
  }

  private synchronized CompletableFuture<Void> write(boolean last, ByteBuffer bytes) {
    writes =
        writes.thenCompose(
            v -> {
              Callback.Completable done = new Callback.Completable();
              exchange.hop.write(last, bytes, done);
              return done;
            });
    return writes;
  }

  private boolean grow(int needed) {
    if (needed <= buffer.length) {
      return true;
    }
    int ceiling = declaredLength >= needed ? (int) Math.min(cap, declaredLength) : cap;
    int capacity = BufferBudget.grow(buffer.length, needed, ceiling, exchange::reserveResponse);
    if (capacity < 0) {
      return false;
    }
    buffer = Arrays.copyOf(buffer, capacity);
    return true;
  }

  /**
   * The answer's head as it was when complete. A client delivers content and completion only after
   * the head, which was either taken or aborted, so a missing head is a broken promise of the
   * client's, answered as an upstream protocol error.
   */
  private Head headOf() {
    Head taken = head;
    if (taken == null) {
      throw new Undeliverable(GatewayProblem.UPSTREAM_PROTOCOL_ERROR, "head unread");
    }
    return taken;
  }

  /** A response's status and fields, as they were when its head was complete. */
  private record Head(int status, Headers fields) {}

  /** Answers the problem, or, if a failure came after the client's answer began, cuts it. */
  private void answerOrCut(GatewayProblem problem, Throwable failure) {
    if (exchange.hop.committed()) {
      exchange.complete(failure);
    } else {
      exchange.answer(problem.response());
    }
  }

  /** A response the upstream gave that the gateway cannot deliver, and the problem it answers. */
  private static final class Undeliverable extends RuntimeException {
    private static final long serialVersionUID = 1L;

    final GatewayProblem problem;

    Undeliverable(GatewayProblem problem, String message) {
      super(message, null, false, false);
      this.problem = problem;
    }
  }
}
