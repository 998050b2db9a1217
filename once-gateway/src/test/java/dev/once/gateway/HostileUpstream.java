package dev.once.gateway;

import dev.once.gateway.HostilePlan.Cut;
import dev.once.gateway.HostilePlan.UpstreamAct;
import java.io.BufferedInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * An upstream on raw sockets that does to each request what its {@link UpstreamAct} says: any
 * status, interim answers, cuts and resets at each phase, delays past every deadline, huge, odd and
 * smuggling headers. It writes down every request head it received (its act, its key, when): each
 * is one upstream effect, what the ledger rule counts.
 */
final class HostileUpstream implements AutoCloseable {

  /** One request the upstream received: an effect. */
  record Effect(int act, String key, long atNanos) {}

  /** No connection waits longer than this for bytes: every thread here ends. */
  private static final int READ_TIMEOUT_MILLIS = 10_000;

  private final ServerSocket server;
  private final List<UpstreamAct> acts;
  private final List<Effect> effects = new CopyOnWriteArrayList<>();
  private final List<Socket> connections = new CopyOnWriteArrayList<>();

  HostileUpstream(List<UpstreamAct> acts) throws IOException {
    this.acts = acts;
    this.server = new ServerSocket(0, 200, InetAddress.getLoopbackAddress());
    Thread acceptor = new Thread(this::accept, "hostile-upstream");
    acceptor.setDaemon(true);
    acceptor.start();
  }

  String url() {
    return "http://127.0.0.1:" + server.getLocalPort();
  }

  List<Effect> effects() {
    return effects;
  }

  private void accept() {
    while (!server.isClosed()) {
      try {
        Socket socket = server.accept();
        connections.add(socket);
        Thread t = new Thread(() -> serve(socket), "hostile-upstream-connection");
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
      socket.setSoTimeout(READ_TIMEOUT_MILLIS);
      for (int served = 0; served < 1_000; served++) {
        String head = HostileClients.readHead(in);
        if (head == null) {
          return;
        }
        String[] lines = head.split("\r\n");
        String[] requestLine = lines[0].split(" ");
        UpstreamAct act = actOf(requestLine.length > 1 ? requestLine[1] : "");
        String key = null;
        long length = 0;
        boolean chunked = false;
        for (String line : lines) {
          String lower = line.toLowerCase(Locale.ROOT);
          if (lower.startsWith("idempotency-key:")) {
            key = line.substring(16).trim();
          } else if (lower.startsWith("content-length:")) {
            length = Long.parseLong(line.substring(15).trim());
          } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
            chunked = true;
          }
        }
        effects.add(new Effect(act == null ? -1 : act.id(), key, System.nanoTime()));
        boolean head0 = requestLine[0].equals("HEAD");
        if (act == null) {
          readBody(in, length, chunked);
          out.write(
              "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n"
                  .getBytes(StandardCharsets.US_ASCII));
          continue;
        }
        if (act.readsBody()) {
          readBody(in, length, chunked);
        }
        if (!answer(socket, out, act, head0)) {
          return;
        }
        if (!act.readsBody()) {
          readBody(in, length, chunked);
        }
      }
    } catch (IOException | RuntimeException e) {
      // the gateway closed the connection, or the act ended it
    }
  }

  private UpstreamAct actOf(String target) {
    if (!target.startsWith("/hostile/")) {
      return null;
    }
    String rest = target.substring(9);
    int end = 0;
    while (end < rest.length() && Character.isDigit(rest.charAt(end))) {
      end++;
    }
    if (end == 0) {
      return null;
    }
    int id = Integer.parseInt(rest.substring(0, end));
    return id < acts.size() ? acts.get(id) : null;
  }

  /** Writes the act's answer; false if the connection is done with (cut, reset or close-framed). */
  private static boolean answer(Socket socket, OutputStream out, UpstreamAct act, boolean head)
      throws IOException {
    switch (act.cut()) {
      case RESET_AFTER_HEAD -> {
        socket.setSoLinger(true, 0);
        return false;
      }
      case CLOSE_AFTER_HEAD -> {
        return false;
      }
      default -> {}
    }
    if (act.delay() == HostilePlan.Delay.BEFORE_STATUS) {
      sleep(act.delayMillis());
    }
    switch (act.interim()) {
      case CONTINUE -> out.write(ascii("HTTP/1.1 100 Continue\r\n\r\n"));
      case EARLY_HINTS ->
          out.write(ascii("HTTP/1.1 103 Early Hints\r\nLink: </a.css>; rel=preload\r\n\r\n"));
      case NONE -> {}
    }
    String statusLine = "HTTP/1.1 " + act.status() + " Hostile\r\n";
    if (act.cut() == Cut.IN_STATUS_LINE) {
      out.write(ascii(statusLine.substring(0, 11)));
      out.flush();
      return false;
    }
    byte[] wire = act.wire();
    StringBuilder fields = new StringBuilder(statusLine);
    fields.append("X-Act: ").append(act.id()).append("\r\n");
    if (act.coding() != HostilePlan.Coding.IDENTITY) {
      fields.append("Content-Encoding: gzip\r\n");
    }
    switch (act.fields()) {
      case HUGE -> fields.append("X-Huge: ").append("h".repeat(12 << 10)).append("\r\n");
      case MANY -> {
        for (int i = 0; i < 60; i++) {
          fields.append("X-Many-").append(i).append(": ").append(i).append("\r\n");
        }
      }
      case ODD ->
          fields
              .append("Connection: X-Hop\r\nX-Hop: secret\r\nX-Empty:\r\nX-Spaced:    v   \r\n")
              .append("X-Latin: caf\u00e9\r\n");
      case PLAIN, SMUGGLED -> {}
    }
    boolean closeFramed = act.framing() == HostilePlan.Framing.CLOSE;
    boolean noBody = head || act.status() == 204 || act.status() == 304 || act.status() < 200;
    if (act.fields() == HostilePlan.Fields.SMUGGLED) {
      // The "body" of a bodiless answer is a whole second response: a client that reads it as the
      // answer to its next request on this connection gets another request's answer.
      byte[] smuggled =
          ascii("HTTP/1.1 200 OK\r\nX-Act: smuggled\r\nContent-Length: 8\r\n\r\nsmuggled");
      fields.append("Content-Length: ").append(smuggled.length).append("\r\n\r\n");
      out.write(fields.toString().getBytes(StandardCharsets.ISO_8859_1));
      out.write(smuggled);
      out.flush();
      return true;
    }
    if (closeFramed) {
      fields.append("Connection: close\r\n");
    } else if (act.framing() == HostilePlan.Framing.CHUNKED && !noBody) {
      fields.append("Transfer-Encoding: chunked\r\n");
    } else if (!noBody || act.status() == 304) {
      fields.append("Content-Length: ").append(wire.length).append("\r\n");
    }
    byte[] headBytes = fields.append("\r\n").toString().getBytes(StandardCharsets.ISO_8859_1);
    if (act.cut() == Cut.IN_HEADERS) {
      out.write(headBytes, 0, headBytes.length / 2);
      out.flush();
      return false;
    }
    out.write(headBytes);
    out.flush();
    if (noBody) {
      return !closeFramed;
    }
    boolean cutBody = act.cut() == Cut.IN_BODY || act.cut() == Cut.RESET_IN_BODY;
    int half = wire.length / 2;
    int upTo = cutBody ? half : wire.length;
    boolean chunked = act.framing() == HostilePlan.Framing.CHUNKED;
    writeBody(out, wire, 0, Math.min(half, upTo), chunked);
    if (act.delay() == HostilePlan.Delay.IN_BODY) {
      sleep(act.delayMillis());
    }
    if (cutBody) {
      if (act.cut() == Cut.RESET_IN_BODY) {
        socket.setSoLinger(true, 0);
      }
      return false;
    }
    writeBody(out, wire, half, wire.length - half, chunked);
    if (chunked) {
      out.write(ascii("0\r\n\r\n"));
    }
    out.flush();
    return !closeFramed;
  }

  private static void writeBody(OutputStream out, byte[] wire, int from, int n, boolean chunked)
      throws IOException {
    if (n == 0) {
      return;
    }
    if (chunked) {
      out.write(ascii(Integer.toHexString(n) + "\r\n"));
    }
    out.write(wire, from, n);
    if (chunked) {
      out.write(ascii("\r\n"));
    }
    out.flush();
  }

  /** Reads and drops a request body; a gateway that stops sending times the read out. */
  private static void readBody(InputStream in, long length, boolean chunked) throws IOException {
    if (chunked) {
      HostileClients.readChunked(in, Integer.MAX_VALUE);
    } else {
      in.skipNBytes(length);
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static byte[] ascii(String s) {
    return s.getBytes(StandardCharsets.US_ASCII);
  }

  @Override
  public void close() throws IOException {
    server.close();
    for (Socket s : connections) {
      s.close();
    }
  }
}
