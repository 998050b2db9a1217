package dev.once.servlet;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Bytes on a socket, for requests the JDK client refuses to send: wrong or duplicate lengths,
 * non-ASCII header values, bodies that stop early.
 */
final class RawHttp {

  /** A parsed response; {@code status} is -1 if the server closed without answering. */
  record Response(int status, List<String[]> headers, String body) {
    Optional<String> header(String name) {
      return headers.stream().filter(h -> h[0].equalsIgnoreCase(name)).map(h -> h[1]).findFirst();
    }
  }

  private RawHttp() {}

  /**
   * Sends the head (CRLF-joined lines, blank line added) and body, then reads until the server
   * closes.
   */
  static Response exchange(int port, List<String> head, byte[] body, boolean closeOutput)
      throws IOException {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(15_000);
      OutputStream out = socket.getOutputStream();
      try {
        out.write((String.join("\r\n", head) + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
        out.write(body);
        out.flush();
        if (closeOutput) {
          socket.shutdownOutput();
        }
      } catch (java.net.SocketException answeredEarly) {
        // The server may answer (431, 413) and close before it has read everything we send.
      }
      return parse(readAll(socket.getInputStream()));
    }
  }

  /** Sends only the head, and reads the first response without sending the declared body. */
  static Response headOnly(int port, List<String> head) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(5_000);
      socket
          .getOutputStream()
          .write((String.join("\r\n", head) + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
      socket.getOutputStream().flush();
      return parse(readAll(socket.getInputStream()));
    }
  }

  /**
   * Sends the request, reads the first {@code bytes} bytes of the answer (or less, if the server
   * closes first), then hangs up without reading the rest, as a client that goes away mid-body.
   * Returns the number of bytes read.
   */
  static int readSomeThenHangUp(int port, List<String> head, byte[] body, int bytes)
      throws IOException {
    try (Socket socket = new Socket("127.0.0.1", port)) {
      socket.setSoTimeout(15_000);
      socket
          .getOutputStream()
          .write((String.join("\r\n", head) + "\r\n\r\n").getBytes(StandardCharsets.UTF_8));
      socket.getOutputStream().write(body);
      socket.getOutputStream().flush();
      byte[] read = socket.getInputStream().readNBytes(bytes);
      // Unread bytes left behind make the close a reset: the server's next write fails at once.
      socket.setSoLinger(true, 0);
      return read.length;
    }
  }

  private static byte[] readAll(InputStream in) throws IOException {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    byte[] buf = new byte[8192];
    try {
      for (int n; (n = in.read(buf)) > 0; ) {
        bytes.write(buf, 0, n);
      }
    } catch (SocketTimeoutException | java.net.SocketException stopped) {
      // Keep what arrived: the server answered and left the connection open, or reset it.
    }
    return bytes.toByteArray();
  }

  private static Response parse(byte[] raw) {
    String text = new String(raw, StandardCharsets.ISO_8859_1);
    int end = text.indexOf("\r\n\r\n");
    if (!text.startsWith("HTTP/") || end < 0) {
      return new Response(-1, List.of(), text);
    }
    String[] lines = text.substring(0, end).split("\r\n");
    int status = Integer.parseInt(lines[0].split(" ")[1]);
    List<String[]> headers = new ArrayList<>();
    for (int i = 1; i < lines.length; i++) {
      int colon = lines[i].indexOf(':');
      headers.add(
          new String[] {lines[i].substring(0, colon).trim(), lines[i].substring(colon + 1).trim()});
    }
    String rest = text.substring(end + 4);
    boolean chunked =
        headers.stream()
            .anyMatch(
                h ->
                    h[0].equalsIgnoreCase("Transfer-Encoding")
                        && h[1].toLowerCase(Locale.ROOT).contains("chunked"));
    String body = chunked ? dechunk(rest) : lengthLimited(rest, headers);
    return new Response(
        status,
        headers,
        new String(body.getBytes(StandardCharsets.ISO_8859_1), StandardCharsets.UTF_8));
  }

  private static String lengthLimited(String rest, List<String[]> headers) {
    return headers.stream()
        .filter(h -> h[0].equalsIgnoreCase("Content-Length"))
        .findFirst()
        .map(h -> rest.substring(0, Math.min(rest.length(), Integer.parseInt(h[1]))))
        .orElse(rest);
  }

  private static String dechunk(String rest) {
    StringBuilder body = new StringBuilder();
    int pos = 0;
    while (true) {
      int eol = rest.indexOf("\r\n", pos);
      if (eol < 0) {
        return body.toString();
      }
      int size = Integer.parseInt(rest.substring(pos, eol).split(";")[0].trim(), 16);
      if (size == 0) {
        return body.toString();
      }
      body.append(rest, eol + 2, Math.min(rest.length(), eol + 2 + size));
      pos = eol + 2 + size + 2;
    }
  }
}
