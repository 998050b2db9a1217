package dev.once.gateway;

import java.io.IOException;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.util.thread.Scheduler;

/**
 * A connection to the upstream on which a reset is a failure, not the end of the input. Jetty's
 * endpoint reads an {@link IOException} ("connection reset") as the end of the stream, and the end
 * of the stream is how a close-delimited body ends: an upstream that resets halfway through such a
 * body (as one does that answers before reading the request, then closes) would be relayed, and on
 * a guarded route recorded, as a shorter body that looks whole. Failing the read makes it what it
 * is, an incomplete response.
 */
final class UpstreamEndPoint extends SparingEndPoint {

  UpstreamEndPoint(
      SocketChannel channel, ManagedSelector selector, SelectionKey key, Scheduler scheduler) {
    super(channel, selector, key, scheduler);
  }

  @Override
  int readFailed(IOException reset) throws IOException {
    throw reset;
  }
}
