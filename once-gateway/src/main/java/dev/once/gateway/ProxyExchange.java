package dev.once.gateway;

import dev.once.http.Exchange;
import dev.once.http.Headers;
import dev.once.http.IncomingRequest;
import dev.once.http.Route;
import dev.once.http.StoredResponse;
import java.nio.ByteBuffer;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpHeaderValue;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * One request through the proxy, from its first byte to the last byte of its answer: the typed
 * exchange every stage of {@link ProxyHandler} works on, in place of request attributes. It holds
 * what the stages learn (the body, the lease) and the three things that must happen exactly once
 * whatever path the request takes: the lease is finished ({@link #settle}), the budget is given
 * back and the client's hop is ended ({@link #complete}).
 */
final class ProxyExchange {

  /** What an unread body counts as (IncomingRequest reads null as empty, too). */
  private static final byte[] NOT_READ = new byte[0];

  /**
   * How much of a refused body is read and dropped after the refusal, at most, and for how long.
   * Closing a connection with request bytes still arriving makes the kernel reset it, and a reset
   * can destroy the refusal before the client reads it: the client sees a dropped connection
   * instead of its 413 or 503. Draining a little lets the answer through (as nginx's lingering
   * close does); the bounds keep a client that goes on sending from holding the connection.
   */
  private static final long DRAIN_BYTES = 4L << 20;

  private static final long DRAIN_MILLIS = 2_000;

  /** The client's side: the request as it came, and where its answer goes. */
  final ClientHop hop;

  final Route route;
  final String method;

  /** Decoded and normalised, as routes match it, so no spelling of a path escapes its route. */
  final String path;

  final Headers headers;

  private final BufferBudget budget;
  private final AtomicBoolean settled = new AtomicBoolean();
  private final AtomicBoolean completed = new AtomicBoolean();

  /** Bytes reserved from the budget; guarded by this, with {@link #returned}. */
  private long reserved;

  /** Of {@link #reserved}, those of the request body, counted against {@link #client}. */
  private long reservedForRequest;

  /** Whose request bodies this one counts with: see {@link Forwarding#client}. */
  private final String client;

  /**
   * Whether the reservation was given back: a late reservation (a read racing a timeout) is
   * refused.
   */
  private boolean returned;

  private volatile byte @Nullable [] body;

  /**
   * Set when the body streaming upstream failed on the client's side (see {@link JettyUpstream}):
   * what the client is answered, unless the upstream already answered.
   */
  private volatile @Nullable GatewayProblem bodyFault;

  private volatile @Nullable Exchange guard;

  ProxyExchange(
      ClientHop hop, String path, Route route, BufferBudget budget, Forwarding forwarding) {
    this.hop = hop;
    this.route = route;
    this.method = hop.method().toUpperCase(Locale.ROOT);
    this.path = path;
    this.headers = hop.headers();
    this.budget = budget;
    this.client = forwarding.client(hop.peer(), hop.peerAddress(), headers);
  }

  /**
   * The request as {@link dev.once.http.HttpIdempotency} judges it; {@code body} may be null (not
   * read).
   */
  IncomingRequest incoming() {
    byte[] read = body;
    String query = hop.query();
    return new IncomingRequest(
        method, path, query == null ? "" : query, headers, read == null ? NOT_READ : read, null);
  }

  /**
   * The whole request body, if it was read (guarded requests); null if it streams to the upstream.
   */
  byte @Nullable [] body() {
    return body;
  }

  void body(byte[] body) {
    this.body = body;
  }

  /**
   * The body streaming upstream failed on the client's side: a bad chunk or an early end ({@link
   * GatewayProblem#REQUEST_BODY_MALFORMED}), or too slow ({@link
   * GatewayProblem#REQUEST_BODY_TIMEOUT}). The first fault stays.
   */
  synchronized void bodyFailed(GatewayProblem fault) {
    if (bodyFault == null) {
      bodyFault = fault;
    }
  }

  @Nullable GatewayProblem bodyFault() {
    return bodyFault;
  }

  /** The lease this request runs under, or null if it is not guarded. */
  @Nullable Exchange guard() {
    return guard;
  }

  void guardedBy(Exchange exchange) {
    this.guard = exchange;
  }

  /**
   * Reserves buffer space for this exchange's request body until it completes; false if request
   * bodies fill their share of the budget.
   */
  boolean reserveRequest(int bytes) {
    return reserve(bytes, true);
  }

  /**
   * Reserves buffer space for this exchange's response body until it completes; false if the budget
   * is full.
   */
  boolean reserveResponse(int bytes) {
    return reserve(bytes, false);
  }

  private synchronized boolean reserve(int bytes, boolean request) {
    if (returned
        || !(request ? budget.reserveRequest(client, bytes) : budget.reserveResponse(bytes))) {
      return false;
    }
    reserved += bytes;
    if (request) {
      reservedForRequest += bytes;
    }
    return true;
  }

  private synchronized void giveBack() {
    returned = true;
    budget.release(reserved);
    budget.releaseRequest(client, reservedForRequest);
    reserved = 0;
    reservedForRequest = 0;
  }

  /**
   * Finishes the lease with {@code ending} (no thread waiting for the store), then runs {@code
   * then}; without a lease, just runs {@code then}. Only the first call finishes anything.
   */
  void settle(Endings.Ending ending, Runnable then) {
    Exchange lease = guard;
    if (lease == null || !settled.compareAndSet(false, true)) {
      then.run();
      return;
    }
    Endings.finish(lease, ending, then);
  }

  /** Sends a whole response (a problem, a replay, a buffered upstream answer) and completes. */
  void answer(StoredResponse answer) {
    closeIfTheBodyIsUnread();
    writeHead(answer.status(), answer.headers(), answer.body().length);
    hop.write(
        true, ByteBuffer.wrap(answer.body()), Callback.from(() -> complete(null), this::complete));
  }

  /**
   * Refuses a request whose body will not be read (too large for the route or for the gateway's
   * buffers): sends {@code problem} with {@code Connection: close}, then reads and drops what is
   * still coming, within {@link #DRAIN_BYTES} and {@link #DRAIN_MILLIS}, before the connection
   * closes. Only when no read of the body is under way.
   */
  void refuse(StoredResponse problem) {
    closeAfter();
    writeHead(problem.status(), problem.headers(), problem.body().length);
    hop.write(true, ByteBuffer.wrap(problem.body()), Callback.from(this::drain, this::complete));
  }

  private void drain() {
    giveBack(); // nothing of the body is held while it drains
    Scheduler.Task stop =
        hop.scheduler().schedule(() -> complete(null), DRAIN_MILLIS, TimeUnit.MILLISECONDS);
    Content.Source body = hop.body();
    new Runnable() {
      private long drained;

      @Override
      public void run() {
        while (!completed.get()) {
          Content.Chunk chunk = body.read();
          if (chunk == null) {
            body.demand(this);
            return;
          }
          drained += chunk.remaining();
          boolean end = chunk.isLast() || Content.Chunk.isFailure(chunk);
          chunk.release();
          if (end || drained > DRAIN_BYTES) {
            stop.cancel();
            complete(null);
            return;
          }
        }
      }
    }.run();
  }

  /**
   * Some answers come before the request body was read, or while part of it is still on its way (a
   * refusal that needs no body, an upstream that failed before taking all of it). A server can only
   * reuse the connection once the body is consumed; if it is not, it closes the connection after
   * the response, and as this response is committed before it looks, it cannot say so. A client
   * that was not told then sends its next request into a closed connection and gets an empty reply.
   * So what has arrived is consumed here, and if more is to come the answer says {@code Connection:
   * close} before it is committed. Answers that already say so (the body is being refused, and may
   * still be read elsewhere) are left alone.
   */
  private void closeIfTheBodyIsUnread() {
    HttpFields.Mutable out = hop.answerFields();
    if (!out.contains(HttpHeader.CONNECTION, "close") && !hop.consumeAvailable()) {
      closeAfter();
    }
  }

  /**
   * The client's connection closes after this answer, which says so: the rest of the request body
   * will not be read, so no next request can be found after it.
   */
  void closeAfter() {
    hop.answerFields().put(HttpHeader.CONNECTION, "close");
  }

  /**
   * Sets the status and the end-to-end headers of a response; the length is the body's, or -1 if it
   * streams. {@code Date} is the server's own and hop-by-hop fields never cross the proxy. The
   * answer to a HEAD and a 304 carry no body, and their {@code Content-Length}, if any, is the
   * upstream's: the length of the representation (RFC 9110 §8.6), never the 0 of the empty body.
   */
  void writeHead(int status, Headers fields, long contentLength) {
    hop.status(status);
    HttpFields.Mutable out = hop.answerFields();
    for (Headers.Field f : fields.endToEnd()) {
      String name = f.name();
      if (!name.equalsIgnoreCase("Date") && !name.equalsIgnoreCase("Content-Length")) {
        out.add(name, f.value());
      }
    }
    if (method.equals("HEAD") || status == 304) {
      fields
          .first("Content-Length")
          .ifPresent(length -> out.put(HttpHeader.CONTENT_LENGTH, length));
    } else if (contentLength >= 0) {
      out.put(HttpHeader.CONTENT_LENGTH, contentLength);
    } else if (status != 204 && hop.http11()) {
      // Chunked, even on a connection that closes after it, where a server may let the close end
      // the body: a body the upstream cut would then reach the client looking whole. Without its
      // last chunk, the cut shows. (An HTTP/1.0 client can only be sent a close-delimited body.)
      out.put(HttpHeader.TRANSFER_ENCODING, HttpHeaderValue.CHUNKED.asString());
    }
  }

  /** Ends the exchange: gives its buffers back and ends the client's hop, once. */
  void complete(@Nullable Throwable failure) {
    if (!completed.compareAndSet(false, true)) {
      return;
    }
    giveBack();
    hop.end(failure);
  }

  @Override
  public String toString() {
    return "ProxyExchange[" + method + " " + path + "]";
  }
}
