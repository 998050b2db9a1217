package dev.once.bench.gateway;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectableChannel;
import java.nio.channels.SelectionKey;
import java.nio.channels.SocketChannel;
import java.util.concurrent.Executor;
import org.eclipse.jetty.http.HttpField;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpGenerator;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpParser;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.io.AbstractConnection;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.EndPoint;
import org.eclipse.jetty.io.ManagedSelector;
import org.eclipse.jetty.io.SelectorManager;
import org.eclipse.jetty.io.SocketChannelEndPoint;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.BufferUtil;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.Promise;
import org.eclipse.jetty.util.thread.Invocable;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * The floor of the gateway's plain path if it kept Jetty's server and replaced Jetty's HTTP client
 * with an upstream connection of its own on Jetty's I/O layer ({@code once-bench/gateway/run.sh},
 * case c1), to set beside the Netty floor ({@link ProxyFloor}, case c0) before choosing between the
 * two (issue 33).
 *
 * <p>It is laid out as the gateway is: a Jetty core handler that never blocks, the upstream's
 * connections carried by the server connector's own selectors (so one thread reads the request,
 * writes it upstream, reads the answer and writes it back), and a client connection resumed on the
 * thread that completed its answer. What it leaves out is the gateway's own work and Jetty's
 * client: the request goes upstream through {@link HttpGenerator} and the answer comes back through
 * {@link HttpParser}, on one upstream connection per client connection, opened at the client
 * connection's first request.
 *
 * <p>Not a proxy to put in front of anything: no limits, no timeouts, no failure handling beyond
 * closing both connections, bodies read whole. It binds to loopback only.
 *
 * <pre>
 * java -cp once-bench/target/benchmarks.jar dev.once.bench.gateway.ProxyFloorJetty PORT UPSTREAM_PORT
 * </pre>
 */
public final class ProxyFloorJetty {

  private static final int BUFFER = 16 << 10;

  private ProxyFloorJetty() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 2) {
      System.err.println("usage: ProxyFloorJetty PORT UPSTREAM_PORT");
      System.exit(2);
    }
    InetSocketAddress upstream = new InetSocketAddress("127.0.0.1", Integer.parseInt(args[1]));
    Server server = new Server(new ResumingThreads());
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    http.setSendDateHeader(false);
    Connector connector = new Connector(server, new HttpConnectionFactory(http));
    connector.setHost("127.0.0.1");
    connector.setPort(Integer.parseInt(args[0]));
    server.addConnector(connector);
    server.setHandler(new Forward(connector, upstream));
    server.start();
    System.out.println("ProxyFloorJetty on 127.0.0.1:" + args[0] + " -> " + upstream);
    server.join();
  }

  /** Every request goes to its client connection's upstream connection, opened at the first. */
  private static final class Forward extends Handler.Abstract.NonBlocking {
    private final Connector connector;
    private final InetSocketAddress address;

    Forward(Connector connector, InetSocketAddress address) {
      this.connector = connector;
      this.address = address;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
      Content.Source.asByteBuffer(
          request,
          new Promise<>() {
            @Override
            public void succeeded(ByteBuffer body) {
              forward(request, body, response, callback);
            }

            @Override
            public void failed(Throwable failure) {
              callback.failed(failure);
            }
          });
      return true;
    }

    private void forward(Request request, ByteBuffer body, Response response, Callback callback) {
      HttpFields.Mutable fields = HttpFields.build();
      for (HttpField field : request.getHeaders()) {
        if (field.getHeader() != HttpHeader.CONNECTION
            && field.getHeader() != HttpHeader.CONTENT_LENGTH) {
          fields.add(field);
        }
      }
      Pending pending = new Pending(request, fields, body, response, callback);
      Object link = request.getConnectionMetaData().getAttribute(Link.class.getName());
      if (link instanceof Link open) {
        open.send(pending);
        return;
      }
      Link created = new Link(pending);
      request.getConnectionMetaData().setAttribute(Link.class.getName(), created);
      request
          .getConnectionMetaData()
          .getConnection()
          .addEventListener(
              new Connection.Listener() {
                @Override
                public void onClosed(Connection connection) {
                  created.close();
                }
              });
      try {
        SocketChannel channel =
            SocketChannel.open(address); // loopback: a blocking connect is short
        channel.configureBlocking(false);
        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
        connector.selectors().accept(channel, created);
      } catch (IOException e) {
        callback.failed(e);
      }
    }
  }

  /** One exchange: the request as it goes upstream, and where its answer goes. */
  private record Pending(
      Request request,
      HttpFields.Mutable fields,
      ByteBuffer body,
      Response response,
      Callback callback) {}

  /** A client connection's upstream connection, before and after it opens. */
  private static final class Link {
    private @Nullable Pending first;
    private @Nullable Upstream connection;
    private boolean closed;

    Link(Pending first) {
      this.first = first;
    }

    synchronized void opened(Upstream connection) {
      this.connection = connection;
      if (closed) {
        connection.close();
        return;
      }
      Pending pending = first;
      first = null;
      if (pending != null) {
        connection.send(pending);
      }
    }

    void send(Pending pending) {
      Upstream open;
      synchronized (this) {
        open = connection;
        if (open == null) {
          first = pending; // the client sends its next request only after this one's answer
          return;
        }
      }
      open.send(pending);
    }

    synchronized void close() {
      closed = true;
      if (connection != null) {
        connection.close();
      }
    }
  }

  /** An upstream connection: one request at a time, as its client connection sends them. */
  private static final class Upstream extends AbstractConnection
      implements HttpParser.ResponseHandler {
    private final HttpParser parser = new HttpParser(this);
    private final HttpGenerator generator = new HttpGenerator();
    private final ByteBuffer head = BufferUtil.allocate(BUFFER);
    private final ByteBuffer input = BufferUtil.allocateDirect(BUFFER);
    private final Link link;
    private @Nullable Pending current;
    private int status;
    private HttpFields.Mutable answer = HttpFields.build();
    private ByteBuffer answerBody = BufferUtil.allocate(BUFFER);

    Upstream(EndPoint endPoint, Executor executor, Link link) {
      super(endPoint, executor);
      this.link = link;
    }

    @Override
    public InvocationType getInvocationType() {
      return InvocationType.NON_BLOCKING;
    }

    @Override
    public void onOpen() {
      super.onOpen();
      link.opened(this);
    }

    void send(Pending pending) {
      current = pending;
      generator.reset();
      BufferUtil.clear(head);
      Request request = pending.request();
      MetaData.Request meta =
          new MetaData.Request(
              request.getMethod(),
              HttpURI.build(request.getHttpURI().getPathQuery()),
              HttpVersion.HTTP_1_1,
              pending.fields(),
              pending.body().remaining());
      try {
        generator.generateRequest(meta, head, null, pending.body(), true);
      } catch (IOException e) {
        fail(e);
        return;
      }
      getEndPoint().write(Callback.from(this::fillInterested, this::fail), head, pending.body());
    }

    @Override
    public void onFillable() {
      try {
        while (true) {
          int filled = getEndPoint().fill(input);
          if (filled < 0) {
            fail(new IOException("upstream closed"));
            return;
          }
          if (filled == 0 && !input.hasRemaining()) {
            fillInterested();
            return;
          }
          if (parser.parseNext(input)) {
            // The answer is whole: the next request asks for more.
            parser.reset();
            deliver();
            return;
          }
          if (filled == 0) {
            fillInterested();
            return;
          }
        }
      } catch (IOException | RuntimeException e) {
        fail(e);
      }
    }

    private void fail(Throwable failure) {
      Pending pending = current;
      current = null;
      close();
      if (pending != null) {
        pending.callback().failed(failure);
      }
    }

    @Override
    public void startResponse(HttpVersion version, int code, String reason) {
      status = code;
      answer = HttpFields.build();
      BufferUtil.clear(answerBody);
    }

    @Override
    public void parsedHeader(HttpField field) {
      if (field.getHeader() != HttpHeader.CONNECTION
          && field.getHeader() != HttpHeader.KEEP_ALIVE
          && field.getHeader() != HttpHeader.TRANSFER_ENCODING
          && field.getHeader() != HttpHeader.CONTENT_LENGTH) {
        answer.add(field);
      }
    }

    @Override
    public boolean headerComplete() {
      return false;
    }

    @Override
    public boolean content(ByteBuffer item) {
      int position = BufferUtil.flipToFill(answerBody);
      answerBody.put(item);
      BufferUtil.flipToFlush(answerBody, position);
      return false;
    }

    @Override
    public boolean contentComplete() {
      return false;
    }

    @Override
    public boolean messageComplete() {
      return true;
    }

    private void deliver() {
      Pending pending = current;
      current = null;
      if (pending != null) {
        Response response = pending.response();
        response.setStatus(status);
        response.getHeaders().add(answer);
        response.write(true, answerBody.slice(), pending.callback());
      }
    }

    @Override
    public void earlyEOF() {
      fail(new IOException("the answer was cut"));
    }
  }

  /** The server's connector, whose selectors also carry the upstream's connections. */
  private static final class Connector extends ServerConnector {
    Connector(Server server, HttpConnectionFactory factory) {
      super(server, factory);
    }

    SelectorManager selectors() {
      return getSelectorManager();
    }

    @Override
    protected SelectorManager newSelectorManager(
        Executor executor, Scheduler scheduler, int selectors) {
      return new ServerConnectorManager(executor, scheduler, selectors) {
        @Override
        protected SocketChannelEndPoint newEndPoint(
            SelectableChannel channel, ManagedSelector selector, SelectionKey key)
            throws IOException {
          SocketChannelEndPoint endPoint = super.newEndPoint(channel, selector, key);
          if (key.attachment() instanceof Link) {
            endPoint.setIdleTimeout(-1);
          }
          return endPoint;
        }

        @Override
        public Connection newConnection(
            SelectableChannel channel, EndPoint endPoint, Object attachment) throws IOException {
          return attachment instanceof Link link
              ? new Upstream(endPoint, getExecutor(), link)
              : super.newConnection(channel, endPoint, attachment);
        }
      };
    }
  }

  /**
   * The server's threads, which resume a client connection that never blocks on the thread that
   * completed its answer, as the gateway's do; at most four deep, so a chain of resumptions cannot
   * grow a stack without bound.
   */
  private static final class ResumingThreads extends QueuedThreadPool {
    private static final ThreadLocal<int[]> nested = ThreadLocal.withInitial(() -> new int[1]);

    @Override
    public void execute(Runnable task) {
      int[] depth = nested.get();
      if (task instanceof Connection
          && Invocable.getInvocationType(task) == Invocable.InvocationType.NON_BLOCKING
          && depth[0] < 4) {
        depth[0]++;
        try {
          task.run();
        } finally {
          depth[0]--;
        }
      } else {
        super.execute(task);
      }
    }
  }
}
