package dev.once.webflux;

import dev.once.http.Headers;
import dev.once.http.StoredResponse;
import java.util.Arrays;
import java.util.function.Supplier;
import org.reactivestreams.Publisher;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.http.server.reactive.ServerHttpResponseDecorator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The response as the handler writes it. Status and headers go straight to the real response (which
 * stays uncommitted); the body is held in memory, so that the whole response can be recorded before
 * the client sees it, and sent with a computed {@code Content-Length} when the exchange finishes.
 *
 * <p>A body that outgrows the cap, or that the handler writes with {@link #writeAndFlushWith}
 * (which it only does to stream), turns the response into a pass-through: what was held goes first,
 * then the rest as the handler writes it, with the demand of the client's connection.
 *
 * <p>Only the headers the handler set are recorded: those already on the response when the filter
 * ran (an outer filter's request id, CORS headers) belong to that one request (DESIGN §4).
 */
final class CapturingResponse extends ServerHttpResponseDecorator {

  private final int cap;

  /** The header fields on the response before the handler ran. */
  private final Headers outer;

  /** What the handler wrote; only the thread delivering its body writes to it, in order. */
  private byte[] held = new byte[0];

  private int count;

  /** Bytes offered by the handler's body so far, counted before they are held. */
  private long offered;

  /** The body goes to the client as it is written: it is not captured. */
  private volatile boolean streamed;

  /** The handler has finished its body (written it whole, or completed without one). */
  private volatile boolean complete;

  /** Subscribed once, when the response starts to stream, before its first byte goes out. */
  private Supplier<Mono<Void>> beforeStreaming = Mono::empty;

  CapturingResponse(ServerHttpResponse real, int cap) {
    super(real);
    this.cap = cap;
    this.outer = Responses.headersOf(real.getHeaders());
  }

  /** Whether the body went (or began to go) to the client as it was written. */
  boolean isStreamed() {
    return streamed;
  }

  /**
   * Subscribes to what {@code action} returns when the response starts to stream, and sends the
   * first byte once it completes (the exchange records the response as done then, see {@link
   * GuardedExchange}).
   */
  void beforeStreaming(Supplier<Mono<Void>> action) {
    this.beforeStreaming = action;
  }

  /** The status the handler set; 200 if it set none, as the server would send. */
  int status() {
    HttpStatusCode status = getDelegate().getStatusCode();
    return status == null ? 200 : status.value();
  }

  @Override
  public Mono<Void> writeWith(Publisher<? extends DataBuffer> body) {
    // The body is cut once, before the first buffer that would take it over the cap: the buffers
    // before are held (the first window, empty if the first buffer is too large), that one and the
    // rest stream (the second).
    return Flux.<DataBuffer>from(body)
        .windowUntil(this::overflows, true)
        .index()
        .concatMap(window -> window.getT1() == 0 ? hold(window.getT2()) : stream(window.getT2()))
        .doOnDiscard(DataBuffer.class, DataBufferUtils::release)
        .then(Mono.fromRunnable(() -> complete = true));
  }

  @Override
  public Mono<Void> writeAndFlushWith(Publisher<? extends Publisher<? extends DataBuffer>> body) {
    streamed = true;
    return Mono.defer(beforeStreaming)
        .then(
            Mono.defer(
                () ->
                    getDelegate()
                        .writeAndFlushWith(
                            Flux.concat(Mono.fromSupplier(() -> Mono.just(releaseHeld())), body))))
        .doOnSuccess(done -> complete = true);
  }

  @Override
  public Mono<Void> setComplete() {
    complete = true;
    return streamed ? getDelegate().setComplete() : Mono.empty();
  }

  @Override
  public boolean isCommitted() {
    return complete || getDelegate().isCommitted();
  }

  /** Whether {@code buffer} takes the body over the cap; true for one buffer at most. */
  private boolean overflows(DataBuffer buffer) {
    if (streamed) {
      return false;
    }
    offered += buffer.readableByteCount();
    if (offered <= cap) {
      return false;
    }
    streamed = true;
    return true;
  }

  private Mono<Void> hold(Flux<DataBuffer> window) {
    return window
        .doOnNext(
            buffer -> {
              try {
                append(buffer);
              } finally {
                DataBufferUtils.release(buffer);
              }
            })
        .then();
  }

  private void append(DataBuffer buffer) {
    int n = buffer.readableByteCount();
    if (count + n > held.length) {
      held = Arrays.copyOf(held, Math.min(cap, Math.max(held.length * 2, count + n)));
    }
    buffer.read(held, count, n);
    count += n;
  }

  /** From now on the body goes to the client as it is written; what was held goes first. */
  private Mono<Void> stream(Flux<DataBuffer> rest) {
    return Mono.defer(beforeStreaming)
        .then(
            Mono.defer(
                () ->
                    getDelegate()
                        .writeWith(Flux.concat(Mono.fromSupplier(this::releaseHeld), rest))));
  }

  /** What was held, as a buffer of the real response's; the response keeps no copy. */
  private DataBuffer releaseHeld() {
    DataBuffer buffer = bufferFactory().wrap(Arrays.copyOf(held, count));
    held = new byte[0];
    count = 0;
    return buffer;
  }

  /** The response as the handler left it: its status, the headers it set, and its body. */
  StoredResponse captured() {
    return new StoredResponse(
        status(),
        Responses.headersOf(getDelegate().getHeaders()).since(outer),
        Arrays.copyOf(held, count));
  }

  /**
   * The handler ended with an error that names its response (a {@code ResponseStatusException}, any
   * {@link org.springframework.web.ErrorResponse}): that status with {@code problem}'s body and
   * content type, and {@code headers} (an {@code Allow}, a {@code Retry-After}), set on the real
   * response too, so that what is recorded is what is sent. What the handler wrote is dropped.
   */
  StoredResponse answer(StoredResponse problem, HttpHeaders headers) {
    HttpHeaders out = getDelegate().getHeaders();
    getDelegate().setStatusCode(HttpStatusCode.valueOf(problem.status()));
    out.setContentType(
        MediaType.parseMediaType(problem.headers().first("Content-Type").orElseThrow()));
    headers.forEach((name, values) -> values.forEach(value -> out.add(name, value)));
    held = problem.body();
    count = held.length;
    return captured();
  }

  /** Sends what {@link #captured()} returned: the status and headers are already in place. */
  Mono<Void> send(StoredResponse captured) {
    return Responses.writeBody(getDelegate(), captured.status(), captured.body());
  }
}
