package dev.once.gateway;

import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.EventLoop;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpRequest;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.DefaultHttpRequest;
import io.netty.handler.codec.http.EmptyHttpHeaders;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.HttpRequest;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslHandler;
import io.netty.handler.ssl.SslProvider;
import io.netty.util.NetUtil;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.concurrent.ScheduledFuture;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.UnknownHostException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import org.eclipse.jetty.client.Origin;
import org.jspecify.annotations.Nullable;

/**
 * The upstream, reached with Netty on the proxy's own event loops ({@link NettyLoops}): each
 * request's upstream connection is opened, or taken from the idle ones, on the loop that carries
 * its client connection, so one exchange's two sockets, its timers and its rules run on one thread
 * and hand nothing to another. It sends one {@link ProxyExchange}'s request as {@link
 * UpstreamFields} shapes it, and reports to its {@link UpstreamResponse} what the rules there judge
 * by: whether the request was sent (to tell a safe failure from an ambiguous one), the answer's
 * head and body, and how the exchange ended. It does what {@link JettyUpstream} does, on other
 * bytes.
 *
 * <p>Idle connections are kept per loop, each loop's touched only by that loop, so taking and
 * returning one needs no lock; only the limit on connections ({@code upstream-max-connections}) and
 * the count of requests waiting for one are shared. A request that finds the limit reached waits
 * (4096 at most, as many as Jetty's client queues) for a connection to be returned or closed; one
 * that finds no room fails as not sent.
 *
 * <p>The client never decodes, follows redirects, answers authentication challenges or keeps
 * cookies, and adds nothing to the request but {@code Host} and its framing: the upstream sees what
 * the rules send, the client what the upstream said.
 */
final class NettyUpstream implements AutoCloseable, ProxyHandler.Forwarder {

  /** Requests that may wait for a connection at once, as Jetty's client queues per destination. */
  static final int MAX_QUEUED = 4096;

  private final NettyLoops loops;
  private final int connectTimeoutMillis;
  private final @Nullable SslContext tls;
  private final String hostName;

  /** How {@link #hostName} is looked up: the JDK's resolver, or a test's. */
  private final NameLookup names;

  private final int port;

  /** The upstream's address when its host is an IP literal: connecting then looks nothing up. */
  private final @Nullable InetSocketAddress literal;

  /** The {@code Host} field every request carries: the upstream origin's authority. */
  private final String host;

  private final String basePath;
  private final long timeoutMillis;
  private final long idleTimeoutNanos;
  private final int maxHeaderBytes;
  private final int maxConnections;
  private final Forwarding forwarding;
  private final long bodyGraceNanos;
  private final long minBodyRate;

  /** Connections open or being opened, on every loop: at most {@link #maxConnections}. */
  private final AtomicInteger open = new AtomicInteger();

  /** Requests waiting for a connection, on every loop: at most {@link #MAX_QUEUED}. */
  private final AtomicInteger waiting = new AtomicInteger();

  private final Map<EventLoop, Lane> lanes = new ConcurrentHashMap<>();
  private volatile boolean closed;

  private NettyUpstream(
      GatewayConfig config, NettyLoops loops, @Nullable SslContext tls, NameLookup names) {
    URI base = config.upstream();
    this.loops = loops;
    this.tls = tls;
    this.names = names;
    this.hostName = base.getHost();
    this.port = base.getPort() >= 0 ? base.getPort() : base.getScheme().equals("https") ? 443 : 80;
    String bare =
        hostName.startsWith("[") ? hostName.substring(1, hostName.length() - 1) : hostName;
    byte[] ip = NetUtil.createByteArrayFromIpAddressString(bare);
    this.literal = ip == null ? null : new InetSocketAddress(addressOf(bare, ip), port);
    // As JettyUpstream's: the authority as Jetty's Origin writes it (no default port).
    this.host =
        URI.create(new Origin(base.getScheme(), hostName, port).asString()).getRawAuthority();
    this.basePath = base.getRawPath() == null ? "" : base.getRawPath();
    this.timeoutMillis = config.upstreamTimeout().toMillis();
    this.idleTimeoutNanos = config.upstreamIdleTimeout().toNanos();
    this.maxHeaderBytes = config.maxHeaderBytes();
    this.maxConnections = config.upstreamMaxConnections();
    this.forwarding = config.forwarding();
    this.bodyGraceNanos = config.requestBodyTimeout().toNanos();
    this.minBodyRate = config.minRequestDataRate();
    this.connectTimeoutMillis =
        (int) Math.min(Integer.MAX_VALUE, config.upstreamConnectTimeout().toMillis());
  }

  private static InetAddress addressOf(String host, byte[] ip) {
    try {
      return InetAddress.getByAddress(host, ip);
    } catch (UnknownHostException e) {
      throw new IllegalArgumentException("not an IP address: " + host, e); // NetUtil parsed it
    }
  }

  /**
   * Where a host name is looked up when a connection opens, as Jetty's client looks it up on its
   * own threads: the JDK's lookup blocks, and on a loop a slow name server would stall every
   * connection the loop carries. A few daemon threads, made when needed.
   */
  private static final ThreadPoolExecutor LOOKUPS = lookups();

  private static ThreadPoolExecutor lookups() {
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            4,
            4,
            30,
            TimeUnit.SECONDS,
            new LinkedBlockingQueue<>(),
            new DefaultThreadFactory("once-upstream-lookup", true));
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /** Prepares the client; its connections live on {@code loops}, which stay the caller's. */
  static NettyUpstream start(GatewayConfig config, NettyLoops loops) throws SSLException {
    return start(config, loops, InetAddress::getAllByName);
  }

  /** As {@link #start(GatewayConfig, NettyLoops)}, looking host names up with {@code names}. */
  static NettyUpstream start(GatewayConfig config, NettyLoops loops, NameLookup names)
      throws SSLException {
    SslContext tls =
        config.upstream().getScheme().equals("https")
            ? SslContextBuilder.forClient().sslProvider(SslProvider.JDK).build()
            : null;
    return new NettyUpstream(config, loops, tls, names);
  }

  /**
   * Looks a host name up, as {@link InetAddress#getAllByName} does, which it is but in tests: a
   * lookup's failures (an {@code Error}, a loop stopped meanwhile) cannot be had from a resolver.
   */
  @FunctionalInterface
  interface NameLookup {
    InetAddress[] addresses(String host) throws UnknownHostException;
  }

  /**
   * Sends the exchange's request upstream, on its client connection's loop, and hands its response
   * to an {@link UpstreamResponse}.
   */
  @Override
  public void forward(ProxyExchange exchange) {
    UpstreamResponse rules = new UpstreamResponse(exchange, maxHeaderBytes);
    EventLoop loop = loops.loopFor(exchange.hop);
    Lane lane = lanes.computeIfAbsent(loop, Lane::new);
    NettyUpstreamExchange call;
    try {
      if (closed) {
        throw new RejectedExecutionException("the upstream client is closed");
      }
      call =
          new NettyUpstreamExchange(
              exchange, rules, lane, request(exchange), bodyGraceNanos, minBodyRate);
    } catch (RuntimeException e) {
      rules.failed(e); // nothing was sent
      return;
    }
    if (loop.inEventLoop()) {
      call.start(timeoutMillis);
      return;
    }
    try {
      loop.execute(() -> call.start(timeoutMillis));
    } catch (RejectedExecutionException e) {
      rules.failed(e); // the loops are stopping: nothing was sent
    }
  }

  /**
   * The request's head as it goes upstream: its target under the base path, its method, the fields
   * {@link UpstreamFields} writes, the upstream's {@code Host} and the body's framing. A body read
   * whole goes with its length; one that streams keeps the framing the client gave it (its declared
   * length, else chunked); a request that declared none has none.
   */
  private HttpRequest request(ProxyExchange exchange) {
    HttpHeaders headers = new DefaultHttpHeaders();
    headers.add(HttpHeaderNames.HOST, host);
    UpstreamFields.write(exchange, forwarding, headers::add);
    HttpMethod method = HttpMethod.valueOf(exchange.method);
    String target = UpstreamFields.target(basePath, exchange.hop);
    if (!UpstreamFields.hasBody(exchange)) {
      return new DefaultFullHttpRequest(
          HttpVersion.HTTP_1_1,
          method,
          target,
          Unpooled.EMPTY_BUFFER,
          headers,
          EmptyHttpHeaders.INSTANCE);
    }
    byte[] read = exchange.body();
    if (read != null) {
      headers.set(HttpHeaderNames.CONTENT_LENGTH, read.length);
      return new DefaultFullHttpRequest(
          HttpVersion.HTTP_1_1,
          method,
          target,
          Unpooled.wrappedBuffer(read),
          headers,
          EmptyHttpHeaders.INSTANCE);
    }
    long length = exchange.hop.body().getLength();
    if (length >= 0) {
      headers.set(HttpHeaderNames.CONTENT_LENGTH, length);
    } else {
      headers.set(HttpHeaderNames.TRANSFER_ENCODING, HttpHeaderValues.CHUNKED);
    }
    return new DefaultHttpRequest(HttpVersion.HTTP_1_1, method, target, headers);
  }

  /** Closes every connection; the loops are the caller's, and go on running. */
  @Override
  public void close() {
    closed = true;
    for (Lane lane : lanes.values()) {
      if (lane.loop.inEventLoop()) {
        lane.closeAll();
        continue;
      }
      try {
        lane.loop.submit(lane::closeAll).awaitUninterruptibly(5, TimeUnit.SECONDS);
      } catch (RejectedExecutionException stopped) {
        // the loop has stopped, and closed its channels with it
      }
    }
  }

  /**
   * One loop's share of the client: its idle connections (the most recently used first, so the
   * oldest age out) and the requests waiting for one. Touched only from its loop; the counts are
   * read elsewhere only as hints of where an idle connection or a waiting request is.
   */
  final class Lane {
    final EventLoop loop;
    private final ArrayDeque<NettyUpstreamConnection> idle = new ArrayDeque<>();
    private final ArrayDeque<NettyUpstreamExchange> waiters = new ArrayDeque<>();
    private final Set<NettyUpstreamConnection> all = new HashSet<>();
    private final AtomicInteger idleCount = new AtomicInteger();
    private final AtomicInteger waiterCount = new AtomicInteger();
    private @Nullable ScheduledFuture<?> sweep;

    Lane(EventLoop loop) {
      this.loop = loop;
    }

    /** Finds {@code call} a connection: an idle one, a new one, or a place in the queue. */
    void acquire(NettyUpstreamExchange call) {
      NettyUpstreamConnection connection;
      while ((connection = idle.pollFirst()) != null) {
        idleCount.decrementAndGet();
        if (connection.channel().isActive()) {
          call.use(connection);
          return;
        }
      }
      if (closed) {
        call.fail(new RejectedExecutionException("the upstream client is closed"));
        return;
      }
      if (tryPermit()) {
        connect(call);
        return;
      }
      if (waiting.incrementAndGet() > MAX_QUEUED) {
        waiting.decrementAndGet();
        call.fail(
            new RejectedExecutionException(
                MAX_QUEUED + " requests already wait for an upstream connection"));
        return;
      }
      waiters.addLast(call);
      waiterCount.incrementAndGet();
      call.queued(true);
      evictIdleElsewhere();
      // A connection that closed between the permit refused above and the queueing found no one
      // waiting, and gave its permit back: take it now.
      admit();
    }

    /** A request that waited, and ended (its timeout), leaves the queue. */
    void leave(NettyUpstreamExchange call) {
      if (waiters.remove(call)) {
        waiterCount.decrementAndGet();
        waiting.decrementAndGet();
      }
    }

    /**
     * The exchange on {@code connection} ended: the connection goes to the next request waiting
     * here, or back to the idle ones, if it can carry another request; else it closes. While
     * requests wait on another loop, a connection this loop does not need closes, so that they can
     * open one there.
     */
    void release(NettyUpstreamConnection connection, boolean reusable) {
      if (!reusable || closed || !connection.reusable()) {
        connection.close();
        return;
      }
      NettyUpstreamExchange next = nextWaiter();
      if (next != null) {
        next.use(connection);
        return;
      }
      if (waiting.get() > 0) {
        connection.close();
        return;
      }
      connection.idle(System.nanoTime());
      idle.addFirst(connection);
      idleCount.incrementAndGet();
      if (sweep == null) {
        sweep = loop.schedule(this::sweep, idleTimeoutNanos, TimeUnit.NANOSECONDS);
      }
    }

    /** Closes the idle connections that have waited {@code upstream-idle-timeout}. */
    private void sweep() {
      long now = System.nanoTime();
      NettyUpstreamConnection oldest;
      while ((oldest = idle.peekLast()) != null && now - oldest.idleSince() >= idleTimeoutNanos) {
        idle.pollLast();
        idleCount.decrementAndGet();
        oldest.close();
      }
      sweep =
          oldest == null
              ? null
              : loop.schedule(
                  this::sweep, oldest.idleSince() + idleTimeoutNanos - now, TimeUnit.NANOSECONDS);
    }

    /**
     * Opens a connection for {@code call}, which holds a permit for it. A host name is looked up
     * here, as Jetty's client looks it up for each connection (the JDK caches it), off the loop.
     */
    private void connect(NettyUpstreamExchange call) {
      InetSocketAddress known = literal;
      if (known != null) {
        dial(call, List.of(known), 0);
        return;
      }
      LOOKUPS.execute(
          () -> {
            List<InetSocketAddress> found = new ArrayList<>();
            Throwable unresolved = null;
            try {
              for (InetAddress address : names.addresses(hostName)) {
                found.add(new InetSocketAddress(address, port));
              }
            } catch (UnknownHostException | RuntimeException | Error e) {
              // An Error too: thrown out of this task, it would end no call, and the key would
              // wait out its lease for a request that was never sent.
              unresolved = e;
            }
            Throwable failure = unresolved;
            try {
              loop.execute(
                  () -> {
                    if (failure == null) {
                      dial(call, found, 0);
                    } else {
                      notOpened(call, failure);
                    }
                  });
            } catch (RejectedExecutionException stopped) {
              // The loop stopped while the name was looked up: nothing was sent, and the call
              // must still end, or its key would wait out its lease.
              returnPermit();
              call.fail(stopped);
            }
          });
    }

    /**
     * Tries {@code addresses} from {@code index} on, one after another, as Jetty's client does: a
     * name with several addresses is reached at the first that accepts. Only a connection that
     * opened is counted among {@link #all} and gives its permit back when it closes; until then the
     * permit is the call's.
     */
    private void dial(NettyUpstreamExchange call, List<InetSocketAddress> addresses, int index) {
      NioSocketChannel channel;
      try {
        channel = new NioSocketChannel();
      } catch (RuntimeException e) {
        notOpened(call, e); // no socket (out of descriptors)
        return;
      }
      channel
          .config()
          .setConnectTimeoutMillis(connectTimeoutMillis)
          // Reads only when the rules ask for more: a slow client slows the upstream.
          .setAutoRead(false)
          .setTcpNoDelay(true);
      NettyUpstreamConnection connection =
          new NettyUpstreamConnection(
              channel, maxHeaderBytes, tls == null ? null : tls(tls, channel));
      loop.register(channel)
          .addListener(
              (ChannelFuture registered) -> {
                if (!registered.isSuccess()) {
                  channel.close();
                  notOpened(call, registered.cause());
                  return;
                }
                channel
                    .connect(addresses.get(index))
                    .addListener(
                        (ChannelFuture done) -> {
                          if (done.isSuccess()) {
                            adopt(connection);
                            opened(call, connection);
                          } else if (index + 1 < addresses.size() && !call.finished()) {
                            channel.close();
                            dial(call, addresses, index + 1);
                          } else {
                            channel.close();
                            notOpened(call, done.cause());
                          }
                        });
              });
    }

    /**
     * Counts a connection that opened, until it closes; one that opened as the client closed is
     * closed.
     */
    private void adopt(NettyUpstreamConnection connection) {
      all.add(connection);
      connection.channel().closeFuture().addListener(gone -> closed(connection));
      if (closed) {
        connection.close();
      }
    }

    /** No connection could be opened for {@code call}: nothing was sent, and its permit is free. */
    private void notOpened(NettyUpstreamExchange call, Throwable failure) {
      call.fail(failure);
      permitFreed();
    }

    /** A connection opened for {@code call}: it carries the call once its TLS handshake is done. */
    private void opened(NettyUpstreamExchange call, NettyUpstreamConnection connection) {
      SslHandler handshaking = connection.channel().pipeline().get(SslHandler.class);
      if (handshaking == null) {
        connected(call, connection);
        return;
      }
      handshaking
          .handshakeFuture()
          .addListener(
              handshake -> {
                if (handshake.isSuccess()) {
                  connected(call, connection);
                } else {
                  call.fail(handshake.cause()); // no byte of the request left
                  connection.close();
                }
              });
    }

    /**
     * A new connection is ready: it carries the request that opened it, or, if that one ended while
     * it was opening, the next.
     */
    private void connected(NettyUpstreamExchange call, NettyUpstreamConnection connection) {
      if (call.finished()) {
        release(connection, true);
      } else {
        call.use(connection);
      }
    }

    private SslHandler tls(SslContext context, Channel channel) {
      SslHandler handler = context.newHandler(channel.alloc(), hostName, port);
      // The certificate must name the upstream, as Jetty's client checks by default.
      SSLEngine engine = handler.engine();
      SSLParameters parameters = engine.getSSLParameters();
      parameters.setEndpointIdentificationAlgorithm("HTTPS");
      engine.setSSLParameters(parameters);
      return handler;
    }

    /** A connection closed: its permit goes to the next request waiting here, or back. */
    private void closed(NettyUpstreamConnection connection) {
      if (!all.remove(connection)) {
        return;
      }
      if (idle.remove(connection)) {
        idleCount.decrementAndGet();
      }
      permitFreed();
    }

    /** A permit this lane held is free: the next request waiting here takes it, or it goes back. */
    private void permitFreed() {
      NettyUpstreamExchange next = nextWaiter();
      if (next != null) {
        connect(next);
      } else {
        returnPermit();
      }
    }

    /** Opens connections for the requests waiting here, while the limit allows. */
    private void admit() {
      while (!waiters.isEmpty() && tryPermit()) {
        NettyUpstreamExchange next = nextWaiter();
        if (next == null) {
          returnPermit();
          return;
        }
        connect(next);
      }
    }

    private @Nullable NettyUpstreamExchange nextWaiter() {
      NettyUpstreamExchange next;
      while ((next = waiters.pollFirst()) != null) {
        waiterCount.decrementAndGet();
        waiting.decrementAndGet();
        next.queued(false);
        if (!next.finished()) {
          return next;
        }
      }
      return null;
    }

    /**
     * Gives a permit back; a request waiting on another loop is told, as no connection of this
     * loop's will reach it.
     */
    private void returnPermit() {
      open.decrementAndGet();
      if (waiting.get() > 0) {
        for (Lane lane : lanes.values()) {
          if (lane != this && lane.waiterCount.get() > 0) {
            lane.post(lane::admit);
          }
        }
      }
    }

    /**
     * At the limit, with no idle connection here: one idle on another loop is closed, so that its
     * permit comes here.
     */
    private void evictIdleElsewhere() {
      for (Lane lane : lanes.values()) {
        if (lane != this && lane.idleCount.get() > 0) {
          lane.post(lane::evictOne);
          return;
        }
      }
    }

    /** Runs {@code task} on this lane's loop, unless the loop has stopped (with its channels). */
    private void post(Runnable task) {
      try {
        loop.execute(task);
      } catch (RejectedExecutionException stopped) {
        // nothing of this lane's is left to act on
      }
    }

    private void evictOne() {
      NettyUpstreamConnection oldest = idle.pollLast();
      if (oldest != null) {
        idleCount.decrementAndGet();
        oldest.close();
      }
    }

    /** Closes every connection of this loop's, and fails the requests waiting here. */
    private void closeAll() {
      if (sweep != null) {
        sweep.cancel(false);
        sweep = null;
      }
      NettyUpstreamExchange next;
      while ((next = nextWaiter()) != null) {
        next.fail(new RejectedExecutionException("the upstream client is closed"));
      }
      for (NettyUpstreamConnection connection : List.copyOf(all)) {
        connection.close();
      }
    }
  }

  private boolean tryPermit() {
    int n;
    do {
      n = open.get();
      if (n >= maxConnections) {
        return false;
      }
    } while (!open.compareAndSet(n, n + 1));
    return true;
  }
}
