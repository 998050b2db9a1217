package dev.once.gateway;

import io.netty.handler.codec.http.HttpContent;
import io.netty.handler.codec.http.LastHttpContent;
import java.io.EOFException;
import java.util.ArrayDeque;
import org.eclipse.jetty.io.Content;
import org.jspecify.annotations.Nullable;

/**
 * A request body as Netty's decoder hands it over, read with demand ({@link Content.Source}): the
 * pieces that have arrived wait here, and a reader that finds none asks to be called back, which
 * reads the socket once. Nothing is read that nobody asked for, so a slow reader (an upstream that
 * takes a streamed body slowly) slows the client, never fills memory.
 *
 * <p>Its reader may be on another thread than the connection's loop (an answer that consumes what
 * arrived, a timer): its state is guarded by this.
 */
final class NettyBody implements Content.Source {

  /** What the connection does for a reader who waits: read the socket (once per demand). */
  interface Reads {
    void readMore(NettyBody body);
  }

  private final long declaredLength;
  private final Reads reads;

  private final ArrayDeque<Content.Chunk> arrived = new ArrayDeque<>();

  /**
   * Nothing more of the body is to come from the socket: its last piece arrived (it may still wait
   * in {@link #arrived}), it failed, or the request declared none.
   */
  private boolean complete;

  /**
   * The decoder gave this body's end (its last piece, or a failure): what it gives next belongs to
   * the next request. Apart from {@link #complete}, since a request without a body still gets an
   * empty last piece. On the connection's loop only.
   */
  private boolean ended;

  /** Why the body cannot be read on: returned by every read from then on. */
  private Content.@Nullable Chunk failure;

  private @Nullable Runnable demand;

  NettyBody(long declaredLength, boolean none, Reads reads) {
    this.declaredLength = declaredLength;
    this.reads = reads;
    this.complete = none;
  }

  /** Whether what the decoder gives next is this body's. On the connection's loop. */
  boolean takes() {
    return !ended;
  }

  /** A piece from the decoder: owned here from now on. On the connection's loop. */
  void arrived(HttpContent content) {
    ended = content instanceof LastHttpContent || content.decoderResult().isFailure();
    Runnable waiting;
    synchronized (this) {
      if (content.decoderResult().isFailure()) {
        content.release();
        failed(content.decoderResult().cause());
      } else if (complete || failure != null) {
        content.release(); // nobody reads on
      } else {
        boolean last = content instanceof LastHttpContent;
        complete = last;
        if (content.content().isReadable() || last) {
          arrived.add(NettyChunks.of(content.content(), last));
        } else {
          content.release();
        }
      }
      waiting = takeDemand();
    }
    if (waiting != null) {
      waiting.run();
    }
  }

  /** The client went away or stopped sending before the body's end. */
  void broken(Throwable cause) {
    Runnable waiting;
    synchronized (this) {
      if (!complete) {
        failed(cause);
      }
      waiting = takeDemand();
    }
    if (waiting != null) {
      waiting.run();
    }
  }

  private void failed(Throwable cause) {
    if (failure == null) {
      failure = Content.Chunk.from(cause, true);
    }
    complete = true;
    releaseArrived();
  }

  /** Whether the body has arrived whole (or failed): nothing more of it is on the socket. */
  synchronized boolean complete() {
    return complete;
  }

  /** Whether a reader waits for bytes that are not here yet: the connection reads for it. */
  synchronized boolean wanted() {
    return demand != null && !complete && arrived.isEmpty();
  }

  @Override
  public long getLength() {
    return declaredLength;
  }

  @Override
  public synchronized Content.@Nullable Chunk read() {
    if (failure != null) {
      return failure;
    }
    Content.Chunk next = arrived.poll();
    if (next != null) {
      return next;
    }
    return complete ? Content.Chunk.EOF : null;
  }

  @Override
  public void demand(Runnable demandCallback) {
    boolean ready;
    synchronized (this) {
      ready = failure != null || complete || !arrived.isEmpty();
      if (!ready) {
        demand = demandCallback;
      }
    }
    if (ready) {
      demandCallback.run();
    } else {
      reads.readMore(this);
    }
  }

  @Override
  public void fail(Throwable failure) {
    synchronized (this) {
      failed(failure);
    }
  }

  /**
   * Drops what has arrived; true if that was the whole body, so that the connection can take its
   * next request.
   */
  synchronized boolean consumeAvailable() {
    releaseArrived();
    return complete && failure == null;
  }

  private @Nullable Runnable takeDemand() {
    if (arrived.isEmpty() && !complete && failure == null) {
      return null;
    }
    Runnable waiting = demand;
    demand = null;
    return waiting;
  }

  private void releaseArrived() {
    for (Content.Chunk c = arrived.poll(); c != null; c = arrived.poll()) {
      c.release();
    }
  }

  /** The failure of a body whose connection ended before its last byte. */
  static EOFException early() {
    return new EOFException("the request body ended early");
  }
}
