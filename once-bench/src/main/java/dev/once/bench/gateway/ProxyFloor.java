package dev.once.bench.gateway;

import io.netty.bootstrap.Bootstrap;
import io.netty.bootstrap.ServerBootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpServerCodec;
import java.net.InetSocketAddress;
import java.util.ArrayDeque;
import org.jspecify.annotations.Nullable;

/**
 * The floor of an HTTP/1.1 proxy on the JVM, for the gateway benchmark ({@code
 * once-bench/gateway/run.sh}, case c0): what forwarding costs with no work of the proxy's own, on
 * the JDK's selector as the gateway uses it, so that the gateway's plain path can be read against
 * both nginx and the JVM.
 *
 * <p>Each client connection gets one upstream connection, opened on the client connection's own
 * event loop: one thread reads the request, writes it upstream, reads the answer and writes it
 * back, with no hand-off between threads. HTTP/1.1 answers come in the order of the requests, so
 * the upstream connection's answers go back in order without any bookkeeping.
 *
 * <p>Not a proxy to put in front of anything: no limits, no timeouts, no header hygiene beyond
 * dropping {@code Connection}. It binds to loopback only.
 *
 * <pre>
 * java -cp once-bench/target/benchmarks.jar dev.once.bench.gateway.ProxyFloor PORT UPSTREAM_PORT [THREADS]
 * </pre>
 */
public final class ProxyFloor {

  /** Bodies of the benchmark are tiny; anything larger than this fails the connection. */
  private static final int MAX_MESSAGE = 1 << 20;

  private ProxyFloor() {}

  public static void main(String[] args) throws InterruptedException {
    if (args.length < 2 || args.length > 3) {
      System.err.println("usage: ProxyFloor PORT UPSTREAM_PORT [THREADS, default 1]");
      System.exit(2);
    }
    int port = Integer.parseInt(args[0]);
    InetSocketAddress upstream = new InetSocketAddress("127.0.0.1", Integer.parseInt(args[1]));
    int threads = args.length == 3 ? Integer.parseInt(args[2]) : 1;
    EventLoopGroup loops = new NioEventLoopGroup(threads);
    Channel server =
        new ServerBootstrap()
            .group(loops)
            .channel(NioServerSocketChannel.class)
            .childOption(ChannelOption.TCP_NODELAY, true)
            .childHandler(
                new ChannelInitializer<Channel>() {
                  @Override
                  protected void initChannel(Channel client) {
                    client
                        .pipeline()
                        .addLast(
                            new HttpServerCodec(),
                            new HttpObjectAggregator(MAX_MESSAGE),
                            new Client(upstream));
                  }
                })
            .bind("127.0.0.1", port)
            .sync()
            .channel();
    System.out.println("ProxyFloor on 127.0.0.1:" + port + " -> " + upstream);
    server.closeFuture().sync();
  }

  /** A client connection: its requests go to its own upstream connection. */
  private static final class Client extends SimpleChannelInboundHandler<FullHttpRequest> {
    private final InetSocketAddress address;

    /** Requests that came before the upstream connection was open. */
    private final ArrayDeque<FullHttpRequest> early = new ArrayDeque<>();

    private @Nullable Channel upstream;

    Client(InetSocketAddress address) {
      this.address = address;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
      Channel client = ctx.channel();
      new Bootstrap()
          .group(client.eventLoop())
          .channel(NioSocketChannel.class)
          .option(ChannelOption.TCP_NODELAY, true)
          .handler(
              new ChannelInitializer<Channel>() {
                @Override
                protected void initChannel(Channel up) {
                  up.pipeline()
                      .addLast(
                          new HttpClientCodec(),
                          new HttpObjectAggregator(MAX_MESSAGE),
                          new Answers(client));
                }
              })
          .connect(address)
          .addListener(
              (ChannelFutureListener)
                  opened -> {
                    if (!opened.isSuccess()) {
                      early.forEach(FullHttpRequest::release);
                      early.clear();
                      client.close();
                      return;
                    }
                    Channel up = opened.channel();
                    upstream = up;
                    for (FullHttpRequest request; (request = early.poll()) != null; ) {
                      up.writeAndFlush(request);
                    }
                  });
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
      FullHttpRequest forwarded = request.retainedDuplicate();
      forwarded.headers().remove(HttpHeaderNames.CONNECTION);
      Channel up = upstream;
      if (up == null) {
        early.add(forwarded);
      } else {
        up.writeAndFlush(forwarded);
      }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      Channel up = upstream;
      if (up != null) {
        up.close();
      }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }

  /** An upstream connection: its answers go back to its client connection, in order. */
  private static final class Answers extends SimpleChannelInboundHandler<FullHttpResponse> {
    private final Channel client;

    Answers(Channel client) {
      this.client = client;
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, FullHttpResponse response) {
      client.writeAndFlush(response.retainedDuplicate());
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
      client.close();
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
      ctx.close();
    }
  }
}
