package dev.once.gateway;

import java.io.Closeable;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.CancelledKeyException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connection of the proxy, on either side, that spares the system calls whose answer it already
 * knows: reads of a socket it has just found empty, and changes of the selector's interest that the
 * next request would undo.
 *
 * <p><b>Reads.</b> After a read that left room in its buffer, or found nothing, every fill reports
 * nothing until the selector sees the socket ready again. Jetty reads a connection again whenever
 * it might go on: its server after every response, and a second time at once when that read finds
 * nothing (a retry meant for TLS); its client after every response, twice. On a proxy's connections
 * the peer sends nothing until it has the answer, so these reads fail with {@code EAGAIN}: three
 * system calls per exchange in case (c) of the gateway benchmark ({@code docs/benchmarks.md}).
 * Netty's reads stop in the same way. A spared fill answers what a read would have answered at the
 * moment of the last one, and a caller must take that answer as a read's {@code EAGAIN}: ask the
 * selector ({@code fillInterested}), which is level-triggered, so bytes (or the end of the stream)
 * that came in meanwhile are reported at once.
 *
 * <p><b>Read interest.</b> Jetty's endpoint takes a socket out of the selector's read set when it
 * is selected and puts it back when the connection next asks to read: on a client's connection the
 * first happens while its request waits for the upstream and the second once the answer is written,
 * two {@code epoll_ctl} calls per exchange, and a wake-up of the selector when the answer was
 * written on another thread (a store's). This endpoint leaves the socket in the read set after a
 * selection and takes it out only if the selector reports it ready while nobody asked to read (a
 * peer that sends ahead, or closes, while its request is served): that costs one selection and one
 * change, once, and the next request to read puts it back. So a connection that is read one
 * exchange at a time stays in the read set, and asking to read costs neither a system call nor a
 * wake-up. Write interest is Jetty's: a socket is nearly always writable, so it is in the write set
 * only while a write waits.
 *
 * <p>The interest state is guarded by {@link #lock}: a connection asks to read or to write from any
 * thread, while the selector's thread selects and updates the key.
 */
class SparingEndPoint extends SocketChannelEndPoint {

  private static final Logger LOG = LoggerFactory.getLogger(SparingEndPoint.class);

  private final ManagedSelector selector;
  private final Object lock = new Object();
  private final ManagedSelector.SelectorUpdate update = this::update;
  private final Selected fill = new Selected(true, false);
  private final Selected write = new Selected(false, true);
  private final Selected writeAndFill = new Selected(true, true);

  /** Replaced only by the selector's thread, when the selector is rebuilt. */
  private volatile SelectionKey key;

  /** What the connection waits for: the operations of its pending fill and flush. */
  private int wanted;

  /** The key's interest set as this endpoint last set it (Jetty registers a channel with none). */
  private int registered;

  /** Whether the selector will update the key without being asked (Jetty's update pending). */
  private boolean updatePending;

  /** Whether the last selection found the socket readable while nobody asked to read. */
  private boolean readUnasked;

  /**
   * Whether the socket had nothing more at the last read and the selector has not seen it ready
   * since. Written by whichever thread fills or selects: a fill that sets it then asks for fill
   * interest, and a selection clears it before it completes that interest, both through the
   * interest's atomic reference. A stale value would cost one read or one selection, never a byte.
   */
  private boolean drained;

  SparingEndPoint(
      SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler) {
    super(channel, selector, key, scheduler);
    this.selector = selector;
    this.key = key;
  }

  @Override
  protected void needsFillInterest() {
    want(SelectionKey.OP_READ);
  }

  @Override
  protected void onIncompleteFlush() {
    want(SelectionKey.OP_WRITE);
  }

  private void want(int operation) {
    boolean ask;
    synchronized (lock) {
      wanted |= operation;
      ask = !updatePending && (registered & operation) == 0;
    }
    if (ask && selector != null) {
      selector.submit(update);
    }
  }

  @Override
  public @Nullable Runnable onSelected() {
    int ready = key.readyOps();
    int due;
    synchronized (lock) {
      updatePending = true;
      due = ready & wanted;
      wanted &= ~ready;
      readUnasked = (ready & ~due & SelectionKey.OP_READ) != 0;
    }
    if ((ready & SelectionKey.OP_READ) != 0) {
      drained = false;
    }
    boolean fillable = (due & SelectionKey.OP_READ) != 0;
    boolean flushable = (due & SelectionKey.OP_WRITE) != 0;
    return fillable ? (flushable ? writeAndFill : fill) : (flushable ? write : null);
  }

  private void update(Selector unused) {
    updateKey();
  }

  @Override
  public void updateKey() {
    try {
      synchronized (lock) {
        updatePending = false;
        // Read interest stays once set, unless the socket was readable with nobody to read it.
        int target = wanted | (readUnasked ? 0 : registered & SelectionKey.OP_READ);
        readUnasked = false;
        if (target != registered) {
          registered = target;
          key.interestOps(target);
        }
      }
    } catch (CancelledKeyException cancelled) {
      LOG.debug("key cancelled, closing {}", this);
      close();
    } catch (RuntimeException | Error failure) {
      LOG.warn("cannot update the selector's interest, closing {}", this, failure);
      close();
    }
  }

  @Override
  public void replaceKey(SelectionKey newKey) {
    key = newKey;
  }

  @Override
  public String toEndPointString() {
    synchronized (lock) {
      return super.toEndPointString() + "{io=" + registered + "/" + wanted + "}";
    }
  }

  @Override
  public int fill(ByteBuffer buffer) throws IOException {
    if (isInputShutdown()) {
      return -1;
    }
    if (drained) {
      return 0;
    }
    int position = BufferUtil.flipToFill(buffer);
    try {
      int room = buffer.remaining();
      int filled = getChannel().read(buffer);
      if (filled > 0) {
        notIdle();
        drained = filled < room;
      } else if (filled == 0) {
        drained = true;
      } else {
        shutdownInput();
      }
      return filled;
    } catch (IOException failure) {
      shutdownInput();
      return readFailed(failure);
    } finally {
      BufferUtil.flipToFlush(buffer, position);
    }
  }

  /**
   * What a fill answers when the read fails, after the input is shut: the end of the stream, as
   * Jetty's own endpoint answers.
   */
  int readFailed(IOException failure) throws IOException {
    return -1;
  }

  /**
   * What a selection has the connection do: complete its write, then its fill, as far as each was
   * due. Its invocation type is its callbacks', so that Jetty runs a non-blocking one on the
   * selector's thread; closing it (when the selector stops with it queued) closes the endpoint.
   */
  private final class Selected implements Runnable, Invocable, Closeable {

    private final boolean fills;
    private final boolean writes;

    Selected(boolean fills, boolean writes) {
      this.fills = fills;
      this.writes = writes;
    }

    @Override
    public void run() {
      if (writes) {
        getWriteFlusher().completeWrite();
      }
      if (fills) {
        getFillInterest().fillable();
      }
    }

    @Override
    public InvocationType getInvocationType() {
      if (!writes) {
        return getFillInterest().getCallbackInvocationType();
      }
      InvocationType flush = getWriteFlusher().getCallbackInvocationType();
      if (!fills) {
        return flush;
      }
      // Jetty's own endpoint's rule: both run in one task, so it is non-blocking only if both are,
      // may run either way only if neither blocks.
      InvocationType fill = getFillInterest().getCallbackInvocationType();
      if (fill == flush) {
        return fill;
      }
      return fill == InvocationType.BLOCKING || flush == InvocationType.BLOCKING
          ? InvocationType.BLOCKING
          : InvocationType.EITHER;
    }

    @Override
    public void close() {
      SparingEndPoint.this.close();
    }

    @Override
    public String toString() {
      return SparingEndPoint.this + (fills ? ":fill" : "") + (writes ? ":write" : "");
    }
  }
}
