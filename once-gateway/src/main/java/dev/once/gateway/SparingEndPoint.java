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
 * A connection of the proxy, on either side, that does not ask the kernel for bytes it has just
 * found the socket without: after a read that left room in its buffer, or found nothing, every fill
 * reports nothing until the selector sees the socket ready again.
 *
 * <p><b>Why.</b> Jetty reads a connection again whenever it might go on: its server after every
 * response, and a second time at once when that read finds nothing (a retry meant for TLS); its
 * client after every response, twice. On a proxy's connections the peer sends nothing until it has
 * the answer, so these reads fail with {@code EAGAIN}: three system calls per exchange that found
 * nothing, where only one of the client's had been spared, in case (c) of the gateway benchmark
 * ({@code docs/benchmarks.md}). Netty's reads stop in the same way.
 *
 * <p><b>Why it is safe.</b> A spared fill answers what a read would have answered at the moment of
 * the last one, and a caller must take that answer as a read's {@code EAGAIN}: ask the selector
 * ({@code fillInterested}), which is level-triggered, so bytes (or the end of the stream) that came
 * in meanwhile are reported at once. What it can cost is a selection where a read would have found
 * bytes that arrived in between; on a proxy's connections that is rare.
 */
class SparingEndPoint extends SocketChannelEndPoint {

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
}
