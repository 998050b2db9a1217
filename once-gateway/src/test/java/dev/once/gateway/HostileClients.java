package dev.once.gateway;

import dev.once.gateway.HostilePlan.ClientAct;
import dev.once.gateway.HostilePlan.Kind;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Clients on raw sockets that do what their {@link ClientAct} says to the gateway: whole requests,
 * heads without bodies, trickles, aborts at several phases, {@code Expect: 100-continue}, two
 * requests in one write. Each reads what comes back within its deadline and reports what it saw.
 */
final class HostileClients {

  /** An answer as the client read it; {@code whole} if its body arrived as framed. */
  record Answer(int status, Map<String, String> headers, byte[] body, boolean whole) {
    boolean problem() {
      return headers.getOrDefault("content-type", "").startsWith("application/problem+json");
    }
  }

  /**
   * What one client saw: the answers (two for a pipelined one), how the connection ended, whether
   * an interim 100 came, and whether it waited past its deadline for something it was owed.
   */
  record Seen(
      ClientAct act,
      long startNanos,
      List<Answer> answers,
      String end,
      boolean continued,
      boolean hung) {}

  private static final int MAX_READ = 4 << 20;
  private static final long TRICKLE_PAUSE_MILLIS = 150;
  private static final int TRICKLE_PIECES = 16;

  private HostileClients() {}

  static Seen run(int port, ClientAct act, long deadlineMillis) {
    long start = System.nanoTime();
    long deadline = System.currentTimeMillis() + deadlineMillis;
    List<Answer> answers = new ArrayList<>();
    boolean[] continued = {false};
    try (Socket socket = new Socket()) {
      socket.connect(new InetSocketAddress("127.0.0.1", port), 5_000);
      socket.setSoTimeout((int) deadlineMillis);
      OutputStream out = socket.getOutputStream();
      InputStream in = new BufferedInputStream(socket.getInputStream());
      byte[] body = body(act);
      byte[] head = head(act, body.length);
      switch (act.kind()) {
        case ABORT_AFTER_HEAD -> {
          out.write(head);
          out.flush();
          return new Seen(act, start, answers, "aborted", false, false);
        }
        case ABORT_IN_BODY -> {
          out.write(head);
          out.write(body, 0, body.length / 2);
          out.flush();
          return new Seen(act, start, answers, "aborted", false, false);
        }
        case ABORT_AFTER_REQUEST -> {
          out.write(concat(head, body));
          out.flush();
          return new Seen(act, start, answers, "aborted", false, false);
        }
        case HEAD_ONLY -> out.write(head);
        case TRICKLE -> trickle(out, head, body);
        case EXPECT_CONTINUE -> expect(socket, in, out, head, body, continued, deadline);
        case PIPELINED ->
            out.write(
                concat(
                    concat(head, body),
                    HostileUpstream.ascii(
                        "GET /hostile/"
                            + act.pipelinedAct()
                            + " HTTP/1.1\r\nHost: gateway\r\nApi-Key: "
                            + Client.MERCHANT
                            + "\r\n\r\n")));
        case COMPLETE, ABORT_AFTER_STATUS -> out.write(concat(head, body));
      }
      out.flush();
      int expected = act.kind() == Kind.PIPELINED ? 2 : 1;
      for (int i = 0; i < expected; i++) {
        remaining(socket, deadline);
        Answer answer =
            read(in, act.method().equals("HEAD"), act.kind() == Kind.ABORT_AFTER_STATUS, continued);
        if (answer == null) {
          return new Seen(
              act,
              start,
              answers,
              answers.isEmpty() ? "closed" : "closed-after",
              continued[0],
              false);
        }
        answers.add(answer);
        if (act.kind() == Kind.ABORT_AFTER_STATUS) {
          return new Seen(act, start, answers, "aborted", continued[0], false);
        }
        if ("close".equalsIgnoreCase(answer.headers().get("connection")) || !answer.whole()) {
          break;
        }
      }
      return new Seen(act, start, answers, "answered", continued[0], false);
    } catch (SocketTimeoutException e) {
      return new Seen(act, start, answers, "timed out", continued[0], true);
    } catch (IOException e) {
      return new Seen(act, start, answers, "reset: " + e.getMessage(), continued[0], false);
    }
  }

  private static void remaining(Socket socket, long deadline) throws IOException {
    long left = deadline - System.currentTimeMillis();
    if (left <= 0) {
      throw new SocketTimeoutException("deadline");
    }
    socket.setSoTimeout((int) left);
  }

  private static void trickle(OutputStream out, byte[] head, byte[] body) throws IOException {
    out.write(head);
    out.flush();
    int piece = Math.max(1, body.length / TRICKLE_PIECES / 4);
    int sent = 0;
    // A quarter of the body, a few bytes at a time; then the rest at once, so each trickle ends.
    for (int i = 0; i < TRICKLE_PIECES && sent < body.length; i++) {
      int n = Math.min(piece, body.length - sent);
      out.write(body, sent, n);
      out.flush();
      sent += n;
      sleep(TRICKLE_PAUSE_MILLIS);
    }
    out.write(body, sent, body.length - sent);
  }

  /** Waits up to a second for {@code 100 Continue} (as curl does), then sends the body anyway. */
  private static void expect(
      Socket socket,
      InputStream in,
      OutputStream out,
      byte[] head,
      byte[] body,
      boolean[] continued,
      long deadline)
      throws IOException {
    out.write(head);
    out.flush();
    socket.setSoTimeout(1_000);
    in.mark(64);
    try {
      byte[] start = new byte[12];
      int n = in.readNBytes(start, 0, 12);
      String line = new String(start, 0, n, StandardCharsets.US_ASCII);
      in.reset();
      if (!line.startsWith("HTTP/1.1 100")) {
        return; // a final answer came first: the body is not sent
      }
    } catch (SocketTimeoutException e) {
      in.reset();
    }
    out.write(body);
    remaining(socket, deadline);
  }

  /** The next final answer, interim ones skipped; null at the end of the stream. */
  private static Answer read(InputStream in, boolean head, boolean statusOnly, boolean[] continued)
      throws IOException {
    for (int interim = 0; interim < 10; interim++) {
      String text = readHead(in);
      if (text == null) {
        return null;
      }
      String[] lines = text.split("\r\n");
      String[] statusLine = lines[0].split(" ", 3);
      int status = Integer.parseInt(statusLine[1]);
      Map<String, String> headers = new HashMap<>();
      for (int i = 1; i < lines.length; i++) {
        int colon = lines[i].indexOf(':');
        if (colon > 0) {
          headers.putIfAbsent(
              lines[i].substring(0, colon).trim().toLowerCase(Locale.ROOT),
              lines[i].substring(colon + 1).trim());
        }
      }
      if (status == 100 || status == 103) {
        continued[0] |= status == 100;
        continue;
      }
      if (statusOnly) {
        return new Answer(status, headers, new byte[0], false);
      }
      if (head || status < 200 || status == 204 || status == 304) {
        return new Answer(status, headers, new byte[0], true);
      }
      try {
        if ("chunked".equalsIgnoreCase(headers.get("transfer-encoding"))) {
          return new Answer(status, headers, readChunked(in, MAX_READ), true);
        }
        String length = headers.get("content-length");
        if (length != null) {
          int n = Integer.parseInt(length);
          byte[] body = in.readNBytes(n);
          return new Answer(status, headers, body, body.length == n);
        }
        return new Answer(status, headers, in.readNBytes(MAX_READ), true);
      } catch (EOFException | java.net.SocketException e) {
        return new Answer(status, headers, new byte[0], false);
      }
    }
    throw new IOException("ten interim answers");
  }

  /** A head: the lines up to the empty one, or null at the end of the stream. */
  static String readHead(InputStream in) throws IOException {
    ByteArrayOutputStream head = new ByteArrayOutputStream();
    int matched = 0;
    while (matched < 4) {
      int b = in.read();
      if (b < 0) {
        if (head.size() == 0) {
          return null;
        }
        throw new EOFException("cut in the head");
      }
      if (head.size() > 64 << 10) {
        throw new IOException("head over 64 KiB");
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

  /** A chunked body, trailers dropped. */
  static byte[] readChunked(InputStream in, int max) throws IOException {
    ByteArrayOutputStream body = new ByteArrayOutputStream();
    while (true) {
      String size = line(in);
      int semi = size.indexOf(';');
      int n = Integer.parseInt((semi < 0 ? size : size.substring(0, semi)).trim(), 16);
      if (n == 0) {
        while (!line(in).isEmpty()) {
          // trailers
        }
        return body.toByteArray();
      }
      if (body.size() + n > max) {
        throw new IOException("chunked body over " + max);
      }
      byte[] chunk = in.readNBytes(n);
      if (chunk.length < n) {
        throw new EOFException("cut in a chunk");
      }
      body.write(chunk);
      line(in);
    }
  }

  private static String line(InputStream in) throws IOException {
    StringBuilder s = new StringBuilder();
    for (int i = 0; i < 4096; i++) {
      int b = in.read();
      if (b < 0) {
        throw new EOFException("cut in a line");
      }
      if (b == '\n') {
        return s.toString().strip();
      }
      s.append((char) b);
    }
    throw new IOException("line over 4 KiB");
  }

  static byte[] body(ClientAct act) {
    byte[] body = new byte[act.bodyBytes()];
    for (int i = 0; i < body.length; i++) {
      body[i] = (byte) ('0' + (act.act() + i) % 10);
    }
    return body;
  }

  private static byte[] head(ClientAct act, int length) {
    StringBuilder s =
        new StringBuilder(act.method())
            .append(' ')
            .append(act.path())
            .append(" HTTP/1.1\r\nHost: gateway\r\nApi-Key: ")
            .append(Client.MERCHANT)
            .append("\r\n");
    if (act.key() != null) {
      s.append("Idempotency-Key: ").append(act.key()).append("\r\n");
    }
    if (act.method().equals("POST")) {
      s.append("Content-Type: application/octet-stream\r\nContent-Length: ")
          .append(length)
          .append("\r\n");
    }
    if (act.kind() == Kind.EXPECT_CONTINUE) {
      s.append("Expect: 100-continue\r\n");
    }
    return HostileUpstream.ascii(s.append("\r\n").toString());
  }

  private static byte[] concat(byte[] a, byte[] b) {
    byte[] both = new byte[a.length + b.length];
    System.arraycopy(a, 0, both, 0, a.length);
    System.arraycopy(b, 0, both, a.length, b.length);
    return both;
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
