package dev.once.gateway;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.group.ChannelGroup;
import io.netty.channel.group.DefaultChannelGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.timeout.IdleStateHandler;
import io.netty.util.concurrent.GlobalEventExecutor;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;

/**
 * The proxy port on Netty: a listener whose connections ({@link NettyConnection}) run the {@link
 * ProxyHandler} chain on their event loop, the loops {@link NettyUpstream} opens each request's
 * upstream connection on.
 *
 * <p>One header limit on every hop (DESIGN §4): the request line and the header section a client
 * may send are each bounded by {@code max-header-bytes}. A stop is graceful: the port closes, idle
 * connections close, each request in flight may finish within the stop timeout (its connection
 * closing after its answer), then whatever is left is cut.
 */
final class NettyProxy implements ProxyPort {

  private final GatewayConfig config;
  private final NettyLoops loops;
  private final ProxyLog served;
  private final ChannelGroup connections = new DefaultChannelGroup(GlobalEventExecutor.INSTANCE);
  private final AtomicInteger inFlight = new AtomicInteger();
  private final CountDownLatch stopped = new CountDownLatch(1);
  private volatile boolean stopping;
  private volatile @Nullable Channel listener;
  private volatile int port;

  /** Every completed request is told to {@code served}. */
  NettyProxy(GatewayConfig config, NettyLoops loops, ProxyLog served) {
    this.config = config;
    this.loops = loops;
    this.served = served;
  }

  @Override
  public void start(ProxyHandler chain) throws InterruptedException {
    int headerBytes = config.maxHeaderBytes();
    long idleMillis = config.clientIdleTimeout().toMillis();
    Channel bound =
        new ServerBootstrap()
            .group(loops.group)
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.AUTO_READ, false)
            .childOption(ChannelOption.ALLOW_HALF_CLOSURE, true)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<SocketChannel>() {
                  @Override
                  protected void initChannel(SocketChannel channel) {
                    channel
                        .pipeline()
                        .addLast(new IdleStateHandler(0, 0, idleMillis, TimeUnit.MILLISECONDS))
                        .addLast(new HttpServerCodec(headerBytes, headerBytes, 16 << 10))
                        .addLast(new NettyConnection(NettyProxy.this, chain, served));
                  }
                })
            .bind(new InetSocketAddress(config.bind(), config.port()))
            .sync()
            .channel();
    listener = bound;
    port = ((InetSocketAddress) bound.localAddress()).getPort();
  }

  @Override
  public int port() {
    return port;
  }

  boolean stopping() {
    return stopping;
  }

  void opened(Channel connection) {
    connections.add(connection);
    if (stopping) {
      connection.close();
    }
  }

  void closed(Channel connection) {
    connections.remove(connection);
  }

  void began() {
    inFlight.incrementAndGet();
  }

  void finished() {
    inFlight.decrementAndGet();
  }

  /**
   * Stops taking connections and requests, lets those in flight finish within the stop timeout,
   * then closes every connection.
   */
  @Override
  public void stop() throws InterruptedException {
    Duration timeout = config.stopTimeout();
    stopping = true;
    Channel bound = listener;
    if (bound != null) {
      bound.close().sync();
    }
    long deadline = System.nanoTime() + timeout.toNanos();
    // A connection between requests closes now; one in a request closes after its answer.
    for (Channel c : connections) {
      c.eventLoop().execute(() -> closeIfIdle(c));
    }
    while (inFlight.get() > 0 && System.nanoTime() < deadline) {
      Thread.sleep(10);
    }
    connections.close().awaitUninterruptibly(timeout.toMillis() + 1_000);
    stopped.countDown();
  }

  private static void closeIfIdle(Channel c) {
    NettyConnection connection = c.pipeline().get(NettyConnection.class);
    if (connection == null || connection.idle()) {
      c.close();
    }
  }

  @Override
  public void join() throws InterruptedException {
    stopped.await();
  }
}
