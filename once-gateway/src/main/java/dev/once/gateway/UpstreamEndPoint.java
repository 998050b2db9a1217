package dev.once.gateway;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * A connection to the upstream on which a reset is a failure, not the end of the input. Jetty's
 * endpoint reads an {@link IOException} ("connection reset") as the end of the stream, and the end
 * of the stream is how a close-delimited body ends: an upstream that resets halfway through such a
 * body (as one does that answers before reading the request, then closes) would be relayed, and on
 * a guarded route recorded, as a shorter body that looks whole. Failing the read makes it what it
 * is, an incomplete response.
 *
 * <p>It also spares the read that would find nothing. Jetty's client reads on after every complete
 * response, and the upstream sends nothing until the next request: a read per exchange that fails
 * with {@code EAGAIN}. After a read that left room in its buffer (the socket had no more then), the
 * next fill reports nothing without asking the kernel, as Netty's reads do; the caller then asks
 * the selector, which is level-triggered, so bytes that came in meanwhile are reported at once.
 * Only one read in a row is spared, and none after the selector saw the socket ready.
 */
final class UpstreamEndPoint extends SocketChannelEndPoint {

  /**
   * Whether the last read left room in its buffer. Read and written by whichever thread fills or
   * selects; a stale value costs one read or one selection, never a byte.
   */
  private boolean drained;

  UpstreamEndPoint(
      SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler) {
    super(channel, selector, key, scheduler);
  }

  @Override
  public Runnable onSelected() {
    drained = false;
    return super.onSelected();
  }

  @Override
  public int fill(ByteBuffer buffer) throws IOException {
    if (isInputShutdown()) {
      return -1;
    }
    if (drained) {
      drained = false;
      return 0;
    }
    int position = BufferUtil.flipToFill(buffer);
    try {
      int room = buffer.remaining();
      int filled = getChannel().read(buffer);
      if (filled > 0) {
        notIdle();
        drained = filled < room;
      } else if (filled == -1) {
        shutdownInput();
      }
      return filled;
    } catch (IOException reset) {
      shutdownInput();
      throw reset;
    } finally {
      BufferUtil.flipToFlush(buffer, position);
    }
  }
}
