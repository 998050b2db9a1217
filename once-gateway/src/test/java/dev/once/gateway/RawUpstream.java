package dev.once.gateway;

import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An upstream on a raw socket that answers every request with the same bytes, exactly as given, on
 * keep-alive connections: for responses no HTTP library would write (a 204 with a body, fields
 * named in {@code Connection}). It counts the requests per {@code Idempotency-Key}.
 *
 * <p>A {@code late} part is written after the response, just before the next answer on the same
 * connection: the bytes of a body that arrive once the connection is back in the client's pool.
 */
final class RawUpstream implements AutoCloseable {

  /** What the upstream does once it has a request's head. */
  private enum Mode {
    /** Reads the body, writes the response (piece by piece) and waits for the next request. */
    KEEP_ALIVE,
    /** As {@link #KEEP_ALIVE}, then closes the connection. */
    CLOSE_AFTER_RESPONSE,
    /** Resets the connection without reading the body. */
    RESET_AFTER_HEAD,
    /** Writes the response, then reads the body and closes. */
    ANSWER_BEFORE_BODY
  }

  private static final long PAUSE_MILLIS = 200;

  private final ServerSocket server;
  private final Mode mode;

  /** The response, written piece by piece, each after a pause but the first. */
  private final List<byte[]> pieces;

  private final byte[] late;
  private final byte[] afterAPause;

  private final List<String> heads = new CopyOnWriteArrayList<>();
  private final List<String> bodies = new CopyOnWriteArrayList<>();
  private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
  private final List<Socket> connections = new CopyOnWriteArrayList<>();

  RawUpstream(String response) throws IOException {
    this(response, "");
  }

  RawUpstream(String response, String late) throws IOException {
    this(Mode.KEEP_ALIVE, List.of(response), late, "");
  }

  /**
   * An upstream that reads a request's head, counts its key, and resets the connection without
   * reading the body: it had the request, while the sender may still be writing it.
   */
  static RawUpstream resettingAfterTheHead() throws IOException {
    return new RawUpstream(Mode.RESET_AFTER_HEAD, List.of(), "", "");
  }

  /**
   * An upstream that writes {@code response} and closes the connection: a response cut short after
   * its status line, when the bytes promise more than they hold.
   */
  static RawUpstream closingAfter(String response) throws IOException {
    return new RawUpstream(Mode.CLOSE_AFTER_RESPONSE, List.of(response), "", "");
  }

  /**
   * An upstream that answers as soon as it has a request's head, while the body is still coming (as
   * servers refuse a body too large or unauthorised), then reads the body and closes: an early
   * response, complete before the request is.
   */
  static RawUpstream answeringBeforeTheBody(String response) throws IOException {
    return answeringBeforeTheBody(response, "");
  }

  /**
   * As {@link #answeringBeforeTheBody(String)}, with more bytes written {@value #PAUSE_MILLIS} ms
   * after the response, still before the body is read: bytes that reach the client in a read of
   * their own, after the response is complete and while the request is still being sent.
   */
  static RawUpstream answeringBeforeTheBody(String response, String afterAPause)
      throws IOException {
    return new RawUpstream(Mode.ANSWER_BEFORE_BODY, List.of(response), "", afterAPause);
  }

  /**
   * An upstream that writes each response in {@code pieces}, each after a pause of {@value
   * #PAUSE_MILLIS} ms but the first, on keep-alive connections: a response that reaches the gateway
   * in reads of its own, with nothing to read in between.
   */
  static RawUpstream inPieces(String... pieces) throws IOException {
    return new RawUpstream(Mode.KEEP_ALIVE, List.of(pieces), "", "");
  }

  private RawUpstream(Mode mode, List<String> pieces, String late, String afterAPause)
      throws IOException {
    this.server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
    this.mode = mode;
    this.pieces = pieces.stream().map(RawUpstream::bytes).toList();
    this.late = bytes(late);
    this.afterAPause = bytes(afterAPause);
    Thread acceptor = new Thread(this::accept, "raw-upstream");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.ISO_8859_1);
  }

  String url() {
    return "http://127.0.0.1:" + server.getLocalPort();
  }

  /** How many requests carried this key (as the upstream received it). */
  int runs(String key) {
    AtomicInteger n = runs.get(key);
    return n == null ? 0 : n.get();
  }

  /** How many connections the gateway opened to this upstream. */
  int connections() {
    return connections.size();
  }

  /** The request lines and header fields received, in order. */
  List<String> heads() {
    return heads;
  }

  /** The bodies of the requests read whole (keep-alive and close-after-response), in order. */
  List<String> bodies() {
    return bodies;
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket socket = server.accept();
        connections.add(socket);
        Thread t = new Thread(() -> serve(socket), "raw-upstream-connection");
        t.setDaemon(true);
        t.start();
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  private void serve(Socket socket) {
    try (socket;
        InputStream in = new BufferedInputStream(socket.getInputStream());
        OutputStream out = socket.getOutputStream()) {
      for (boolean first = true; ; first = false) {
        String head = readHead(in);
        if (head == null) {
          return;
        }
        heads.add(head);
        int length = 0;
        boolean chunked = false;
        for (String line : head.split("\r\n")) {
          String lower = line.toLowerCase(Locale.ROOT);
          chunked |= lower.equals("transfer-encoding: chunked");
          if (lower.startsWith("content-length:")) {
            length = Integer.parseInt(line.substring(15).trim());
          } else if (lower.startsWith("idempotency-key:")) {
            runs.computeIfAbsent(line.substring(16).trim(), k -> new AtomicInteger())
                .incrementAndGet();
          }
        }
        switch (mode) {
          case RESET_AFTER_HEAD -> {
            socket.setSoLinger(true, 0);
            return;
          }
          case ANSWER_BEFORE_BODY -> {
            writePieces(out);
            if (afterAPause.length > 0) {
              sleep();
              out.write(afterAPause);
              out.flush();
            }
            // Read what comes, so that closing resets nothing the gateway has yet to read.
            if (chunked) {
              HostileClients.readChunked(in, Integer.MAX_VALUE);
            } else {
              in.readNBytes(length);
            }
            return;
          }
          case KEEP_ALIVE, CLOSE_AFTER_RESPONSE -> {
            bodies.add(new String(in.readNBytes(length), StandardCharsets.ISO_8859_1));
            if (!first) {
              out.write(late);
            }
            writePieces(out);
            if (mode == Mode.CLOSE_AFTER_RESPONSE) {
              return;
            }
          }
        }
      }
    } catch (IOException e) {
      // the gateway closed the connection
    }
  }

  private void writePieces(OutputStream out) throws IOException {
    for (int i = 0; i < pieces.size(); i++) {
      if (i > 0) {
        sleep();
      }
      out.write(pieces.get(i));
      out.flush();
    }
  }

  private static void sleep() throws IOException {
    try {
      Thread.sleep(PAUSE_MILLIS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException(e);
    }
  }

  /** The request line and headers, or null at the end of the stream. */
  private static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int b = in.read();
      if (b < 0) {
        return null;
      }
      head.write(b);
      matched =
          (b == '\r' && (matched == 0 || matched == 2))
                  || (b == '\n' && (matched == 1 || matched == 3))
              ? matched + 1
              : 0;
    }
    return head.toString(StandardCharsets.ISO_8859_1);
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket s : connections) {
      s.close();
    }
  }
}
