package dev.once.tck;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * A loopback TCP proxy that loses answers on purpose, for tests of what happens when the network
 * fails at the worst moment. It forwards bytes both ways between a client and a server on
 * 127.0.0.1, and on demand:
 *
 * <ul>
 *   <li>{@link #dropResponses(int)}: the next {@code n} answers are swallowed. The request reaches
 *       the server, which processes it and answers; when the first bytes of that answer arrive the
 *       proxy resets the client's connection (TCP RST) instead of passing them on. This is the case
 *       idempotency keys exist for: the effect happened, and the client cannot know it.
 *   <li>{@link #delayResponses(int, Duration)}: the next {@code n} answers are held back for a
 *       while, then passed on (client timeouts).
 *   <li>{@link #cut()} / {@link #restore()}: every connection is closed and new ones are refused
 *       until restored (the server is gone).
 * </ul>
 *
 * <p>An "answer" is the first bytes the server sends on a new connection or after the client last
 * sent some: one HTTP/1.1 response for clients that do not pipeline (the JDK's does not), one reply
 * of a request–response database protocol (or its greeting, for protocols where the server speaks
 * first). Bounded: it only ever listens on and connects to loopback, serves at most {@link
 * #MAX_CONNECTIONS} connections at a time (two daemon threads each), and {@link #close()} ends them
 * all.
 */
public final class FaultProxy implements AutoCloseable {

  /** The most connections served at once; more are refused. */
  public static final int MAX_CONNECTIONS = 64;

  private final ServerSocket server;
  private final int targetPort;
  private final Set<Socket> open = ConcurrentHashMap.newKeySet();
  private final AtomicInteger drops = new AtomicInteger();
  private final AtomicInteger passes = new AtomicInteger();
  private final AtomicInteger delays = new AtomicInteger();
  private final AtomicReference<Duration> delay = new AtomicReference<>(Duration.ZERO);
  private final AtomicInteger dropped = new AtomicInteger();
  private final AtomicInteger accepted = new AtomicInteger();
  private volatile boolean cut;
  private volatile boolean closed;

  private FaultProxy(int targetPort) throws IOException {
    this.targetPort = targetPort;
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::acceptLoop, "fault-proxy-accept-" + port());
    acceptor.setDaemon(true);
    acceptor.start();
  }

  /** Starts a proxy on a free loopback port in front of {@code targetPort} on loopback. */
  public static FaultProxy to(int targetPort) throws IOException {
    if (targetPort < 1 || targetPort > 65535) {
      throw new IllegalArgumentException(
          "targetPort must be between 1 and 65535, was " + targetPort);
    }
    return new FaultProxy(targetPort);
  }

  /** The port clients should connect to. */
  public int port() {
    return server.getLocalPort();
  }

  /**
   * Swallows the next {@code n} answers: each request is forwarded and processed, then the client's
   * connection is reset when the answer starts to arrive. Replaces any drops still pending.
   */
  public void dropResponses(int n) {
    dropResponsesAfter(0, n);
  }

  /**
   * Passes the next {@code passed} answers on, then swallows the {@code n} after them, as {@link
   * #dropResponses(int)} does: a test that does not know how many answers a call takes tries every
   * {@code passed} in turn, to fail the call at each of its round trips. Replaces any drops still
   * pending.
   */
  public void dropResponsesAfter(int passed, int n) {
    requireCount(passed);
    requireCount(n);
    drops.set(0);
    passes.set(passed);
    drops.set(n);
  }

  /** Holds each of the next {@code n} answers back for {@code delay} before passing it on. */
  public void delayResponses(int n, Duration delay) {
    requireCount(n);
    if (delay == null || delay.isNegative() || delay.compareTo(Duration.ofMinutes(5)) > 0) {
      throw new IllegalArgumentException("delay must be between 0 and 5 minutes, was " + delay);
    }
    this.delay.set(delay);
    delays.set(n);
  }

  /** Closes every connection at once and refuses new ones until {@link #restore()}. */
  public void cut() {
    cut = true;
    open.forEach(FaultProxy::closeQuietly);
    open.clear();
  }

  /** Accepts connections again after {@link #cut()}. */
  public void restore() {
    cut = false;
  }

  /** How many answers were swallowed so far. */
  public int droppedResponses() {
    return dropped.get();
  }

  /** How many client connections were accepted and forwarded so far. */
  public int acceptedConnections() {
    return accepted.get();
  }

  private static void requireCount(int n) {
    if (n < 0 || n > 1_000_000) {
      throw new IllegalArgumentException("n must be between 0 and 1000000, was " + n);
    }
  }

  private void acceptLoop() {
    while (!closed) {
      Socket client;
      try {
        client = server.accept();
      } catch (IOException e) {
        return; // closed
      }
      if (cut || open.size() >= 2 * MAX_CONNECTIONS) {
        closeQuietly(client);
        continue;
      }
      try {
        Socket upstream = new Socket();
        // Bytes pass on as they come: the proxy adds only the delays it is told to.
        client.setTcpNoDelay(true);
        upstream.setTcpNoDelay(true);
        upstream.connect(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 2_000);
        open.add(client);
        open.add(upstream);
        accepted.incrementAndGet();
        Connection connection = new Connection(client, upstream);
        start(connection::requests, "requests");
        start(connection::answers, "answers");
      } catch (IOException e) {
        closeQuietly(client);
      }
    }
  }

  private void start(Runnable pump, String name) {
    Thread t = new Thread(pump, "fault-proxy-" + name + "-" + port());
    t.setDaemon(true);
    t.start();
  }

  /**
   * One proxied connection: a pump each way, and whether the server's next bytes start an answer.
   */
  private final class Connection {
    private final Socket client;
    private final Socket upstream;
    private volatile boolean answerPending = true;

    Connection(Socket client, Socket upstream) {
      this.client = client;
      this.upstream = upstream;
    }

    void requests() {
      byte[] buffer = new byte[16 * 1024];
      try (InputStream in = client.getInputStream();
          OutputStream out = upstream.getOutputStream()) {
        for (int n; (n = in.read(buffer)) >= 0; ) {
          answerPending = true;
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (IOException e) {
        // One side went away; closing both below tells the other.
      } finally {
        end();
      }
    }

    void answers() {
      byte[] buffer = new byte[16 * 1024];
      try (InputStream in = upstream.getInputStream();
          OutputStream out = client.getOutputStream()) {
        for (int n; (n = in.read(buffer)) >= 0; ) {
          if (answerPending) {
            answerPending = false;
            // An answer passed on while drops are armed counts against the passes first.
            if (drops.get() > 0 && !takeOne(passes) && takeOne(drops)) {
              dropped.incrementAndGet();
              reset(client);
              return;
            }
            if (takeOne(delays)) {
              holdBack(Objects.requireNonNull(delay.get()));
            }
          }
          out.write(buffer, 0, n);
          out.flush();
        }
      } catch (IOException e) {
        // One side went away.
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      } finally {
        end();
      }
    }

    private void end() {
      closeQuietly(client);
      closeQuietly(upstream);
      open.remove(client);
      open.remove(upstream);
    }
  }

  /**
   * Waits this long, to the microsecond: {@code Thread.sleep} on JDK 17 rounds a part of a
   * millisecond to a whole one, and a network's round trip is often less.
   */
  private static void holdBack(Duration delay) throws InterruptedException {
    long deadline = System.nanoTime() + delay.toNanos();
    for (long left; (left = deadline - System.nanoTime()) > 0; ) {
      LockSupport.parkNanos(left);
      if (Thread.interrupted()) {
        throw new InterruptedException();
      }
    }
  }

  private static boolean takeOne(AtomicInteger budget) {
    return budget.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
  }

  /**
   * Closes with SO_LINGER 0, so that the peer sees a reset rather than an orderly end of stream.
   */
  private static void reset(Socket s) {
    try {
      s.setSoLinger(true, 0);
    } catch (IOException e) {
      // Closed already; the close below is then a no-op.
    }
    closeQuietly(s);
  }

  private static void closeQuietly(Socket s) {
    try {
      s.close();
    } catch (IOException e) {
      // Already closed.
    }
  }

  @Override
  public void close() throws IOException {
    closed = true;
    cut();
    server.close();
  }

  @Override
  public String toString() {
    return "FaultProxy[" + port() + " -> " + targetPort + "]";
  }
}
