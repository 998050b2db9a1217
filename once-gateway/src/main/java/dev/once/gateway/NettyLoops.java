package dev.once.gateway;

import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * The event loops of the Netty core: each carries client connections and the upstream connections
 * their requests opened, so one request's two sockets, its timers and its rules run on one thread
 * and hand nothing to another.
 */
final class NettyLoops implements AutoCloseable {

  /** A client's side that lives on one loop: its upstream connection is opened on the same. */
  interface Bound {
    EventLoop loop();
  }

  /** The name the loops' threads start with. */
  static final String THREADS = "once-proxy";

  final EventLoopGroup group;

  NettyLoops(int threads) {
    // Daemon threads, as the Jetty core's are: a gateway left open never holds a JVM up.
    this.group = new NioEventLoopGroup(threads, new DefaultThreadFactory(THREADS, true));
  }

  /** One loop per core: the loops never block, so more would only take turns. */
  static NettyLoops start() {
    return new NettyLoops(Runtime.getRuntime().availableProcessors());
  }

  /**
   * The loop a request's upstream connection lives on: its client connection's, or any for a client
   * whose side runs elsewhere.
   */
  EventLoop loopFor(ClientHop hop) {
    return hop instanceof Bound bound ? bound.loop() : group.next();
  }

  /** Stops the loops once nothing runs on them, waiting at most {@code within}. */
  void close(Duration within) {
    group.shutdownGracefully(0, within.toMillis(), TimeUnit.MILLISECONDS).awaitUninterruptibly();
  }

  @Override
  public void close() {
    close(Duration.ofSeconds(5));
  }
}
