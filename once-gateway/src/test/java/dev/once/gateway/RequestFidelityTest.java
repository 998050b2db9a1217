package dev.once.gateway;

import static dev.once.gateway.Client.key;
import static org.assertj.core.api.Assertions.assertThat;

import dev.once.http.ProblemType;
import dev.once.http.Problems;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * What the gateway forwards of a request, and what it refuses (issue 30, items 11-13): header names
 * with '_' stay behind, a request without a body goes without one and without an invented {@code
 * Content-Type}, CONNECT and TRACE are answered 501 and never forwarded, and a 304 keeps the
 * upstream's fields without an invented {@code Content-Length: 0}.
 */
@Timeout(60)
class RequestFidelityTest {

  private static final String OK = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}";

  @Test
  void headerNamesWithAnUnderscoreAreNotForwarded() throws Exception {
    try (RawUpstream upstream = new RawUpstream(OK);
        TestGateway gw = TestGateway.start("--upstream", upstream.url())) {

      HttpResponse<String> response =
          gw.client.postJson(
              "/payments/underscore", key(), "{}", "Once_Token", "999", "X-Fine", "yes");

      assertThat(response.statusCode()).isEqualTo(200);
      String head = lower(upstream.heads().get(0));
      assertThat(head).contains("\r\nx-fine: yes\r\n").doesNotContain("once_token");
      assertThat(head).contains("\r\nonce-token: "); // the gateway's own, for the lease
    }
  }

  @Test
  void bodilessGetDeleteAndOptionsGoUpstreamWithoutContentTypeOrLength() throws Exception {
    try (RawUpstream upstream = new RawUpstream(OK);
        TestGateway gw = TestGateway.start("--upstream", upstream.url())) {
      for (String method : List.of("GET", "DELETE", "OPTIONS")) {
        String answer = exchange(gw, method + " /things/1 HTTP/1.1\r\nHost: gateway\r\n\r\n");

        assertThat(answer).as(method).startsWith("HTTP/1.1 200 ");
      }

      assertThat(upstream.heads()).hasSize(3);
      for (String head : upstream.heads()) {
        assertThat(lower(head)).doesNotContain("content-type").doesNotContain("content-length");
      }
    }
  }

  @Test
  void aPostWithoutContentTypeGoesUpstreamWithoutOne() throws Exception {
    try (RawUpstream upstream = new RawUpstream(OK);
        TestGateway gw = TestGateway.start("--upstream", upstream.url())) {
      String unkeyed = "POST /things HTTP/1.1\r\nHost: gateway\r\nContent-Length: 3\r\n\r\nabc";
      String keyed =
          "POST /things HTTP/1.1\r\nHost: gateway\r\nIdempotency-Key: "
              + key()
              + "\r\nContent-Length: 3\r\n\r\nabc";

      assertThat(exchange(gw, unkeyed)).startsWith("HTTP/1.1 200 ");
      assertThat(exchange(gw, keyed)).startsWith("HTTP/1.1 200 ");

      assertThat(upstream.heads()).hasSize(2);
      for (String head : upstream.heads()) {
        assertThat(lower(head)).contains("content-length: 3").doesNotContain("content-type");
      }
    }
  }

  @Test
  void aTargetJavaNetUriRefusesIsForwardedAsTheClientWroteIt() throws Exception {
    try (RawUpstream upstream = new RawUpstream(OK);
        TestGateway gw = TestGateway.start("--upstream", upstream.url())) {

      String answer =
          exchange(gw, "GET /things/a%20b?q=a|b&r={x}&s=%7C HTTP/1.1\r\nHost: gateway\r\n\r\n");

      assertThat(answer).startsWith("HTTP/1.1 200 ");
      assertThat(upstream.heads()).hasSize(1);
      assertThat(upstream.heads().get(0))
          .startsWith("GET /things/a%20b?q=a|b&r={x}&s=%7C HTTP/1.1\r\n");
    }
  }

  @Test
  void theUpstreamsBasePathPrefixesTheTarget() throws Exception {
    try (RawUpstream upstream = new RawUpstream(OK);
        TestGateway gw = TestGateway.start("--upstream", upstream.url() + "/base/")) {

      assertThat(exchange(gw, "GET /things?q=1 HTTP/1.1\r\nHost: gateway\r\n\r\n"))
          .startsWith("HTTP/1.1 200 ");

      assertThat(upstream.heads().get(0)).startsWith("GET /base/things?q=1 HTTP/1.1\r\n");
    }
  }

  @Test
  void anUnguardedResponseStreamsFromItsFirstByte() throws Exception {
    CountDownLatch end = new CountDownLatch(1);
    try (ServerSocket events = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        TestGateway gw =
            TestGateway.start("--upstream", "http://127.0.0.1:" + events.getLocalPort())) {
      Thread upstream =
          new Thread(
              () -> {
                try (Socket socket = events.accept()) {
                  socket.getInputStream().read(new byte[8192]); // the head of a GET
                  socket
                      .getOutputStream()
                      .write(
                          ("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n"
                                  + "Transfer-Encoding: chunked\r\n\r\nb\r\ndata: one\n\n\r\n")
                              .getBytes(StandardCharsets.US_ASCII));
                  socket.getOutputStream().flush();
                  end.await(10, TimeUnit.SECONDS); // the stream goes on: no last chunk yet
                } catch (IOException e) {
                  // the gateway went away
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              "event-stream-upstream");
      upstream.setDaemon(true);
      upstream.start();
      try (Socket socket = new Socket("127.0.0.1", gw.gateway.port())) {
        socket.setSoTimeout(10_000);
        socket
            .getOutputStream()
            .write(
                "GET /events HTTP/1.1\r\nHost: gateway\r\n\r\n"
                    .getBytes(StandardCharsets.US_ASCII));
        InputStream in = socket.getInputStream();
        StringBuilder seen = new StringBuilder();
        for (int b; seen.indexOf("data: one") < 0 && (b = in.read()) >= 0; ) {
          seen.append((char) b);
        }

        assertThat(seen.toString()).startsWith("HTTP/1.1 200 ").contains("data: one");
      } finally {
        end.countDown();
      }
    }
  }

  @Test
  void connectAndTraceAreAnswered501AndNeverForwarded() throws Exception {
    try (RawUpstream upstream = new RawUpstream(OK);
        TestGateway gw = TestGateway.start("--upstream", upstream.url())) {

      String connect =
          exchange(gw, "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n");
      String trace =
          exchange(gw, "TRACE /things HTTP/1.1\r\nHost: gateway\r\nCookie: session=s1\r\n\r\n");

      assertThat(connect).startsWith("HTTP/1.1 501 ").contains("method-not-supported");
      assertThat(trace).startsWith("HTTP/1.1 501 ").contains("method-not-supported");
      assertThat(upstream.heads()).isEmpty();
    }
  }

  /**
   * A method must be a token (RFC 9110 §9.1): Jetty's parser takes any visible character there, and
   * an upstream may parse such bytes otherwise. Refused before anything is forwarded, as nginx
   * refuses them; an extension method is not.
   */
  @Test
  void aMethodThatIsNoTokenIsAnswered400AndNeverForwarded() throws Exception {
    try (RawUpstream upstream = new RawUpstream(OK);
        TestGateway gw = TestGateway.start("--upstream", upstream.url())) {
      for (String method : List.of("}POST", "PO{ST", "PO\"ST", "PO/ST", "PO@ST", "PO\u00dfT")) {
        String answer =
            exchange(
                gw,
                method
                    + " /payments/1 HTTP/1.1\r\nHost: gateway\r\nIdempotency-Key: "
                    + key()
                    + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");

        // Jetty refuses some itself, the gateway the others: a 400 problem either way.
        assertThat(answer).as(method).startsWith("HTTP/1.1 400 ").contains(Problems.MEDIA_TYPE);
      }
      assertThat(exchange(gw, "}POST /payments/1 HTTP/1.1\r\nHost: gateway\r\n\r\n"))
          .as("a method Jetty's parser takes")
          .contains("method-malformed");
      assertThat(upstream.heads()).isEmpty();

      String extension = exchange(gw, "PURGE /things HTTP/1.1\r\nHost: gateway\r\n\r\n");

      assertThat(extension).startsWith("HTTP/1.1 200 ");
      assertThat(upstream.heads()).hasSize(1);
    }
  }

  /**
   * The gateway judges and forwards a method in upper case, so a covered one spelt in lower case is
   * guarded, not passed on for an upstream that reads methods in any case (Django and Werkzeug
   * upper-case them) to run once per retry.
   */
  @Test
  void aCoveredMethodInLowerCaseIsGuarded() throws Exception {
    try (RawUpstream upstream = new RawUpstream(OK);
        TestGateway gw = TestGateway.start("--upstream", upstream.url())) {
      String key = key();
      String request =
          " /payments/1 HTTP/1.1\r\nHost: gateway\r\nApi-Key: "
              + Client.MERCHANT
              + "\r\nIdempotency-Key: "
              + key
              + "\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}";

      String first = exchange(gw, "post" + request);
      String retry = exchange(gw, "Post" + request);

      assertThat(first).startsWith("HTTP/1.1 200 ");
      assertThat(retry)
          .startsWith("HTTP/1.1 200 ")
          .containsIgnoringCase("Idempotent-Replayed: true");
      assertThat(upstream.runs(key)).isEqualTo(1);
      assertThat(upstream.heads()).hasSize(1).allMatch(head -> head.startsWith("POST "));
    }
  }

  @Test
  void a304KeepsTheUpstreamsFieldsWithoutAnInventedContentLength() throws Exception {
    try (RawUpstream upstream =
            new RawUpstream(
                "HTTP/1.1 304 Not Modified\r\nETag: \"v1\"\r\nCache-Control: max-age=60\r\n\r\n");
        TestGateway gw = TestGateway.start("--upstream", upstream.url())) {
      String key = key();

      String passedThrough =
          exchange(gw, "GET /things/1 HTTP/1.1\r\nHost: gateway\r\nIf-None-Match: \"v1\"\r\n\r\n");
      HttpResponse<String> first = gw.client.postJson("/payments/cached", key, "{}");
      HttpResponse<String> replay = gw.client.postJson("/payments/cached", key, "{}");

      assertThat(passedThrough)
          .startsWith("HTTP/1.1 304 ")
          .contains("\r\nETag: \"v1\"\r\n")
          .doesNotContainIgnoringCase("Content-Length");
      for (HttpResponse<String> response : List.of(first, replay)) {
        assertThat(response.statusCode()).isEqualTo(304);
        assertThat(response.headers().firstValue("ETag")).contains("\"v1\"");
        assertThat(response.headers().firstValue("Cache-Control")).contains("max-age=60");
        assertThat(response.headers().firstValue("Content-Length")).isEmpty();
      }
      assertThat(replay.headers().firstValue("Idempotent-Replayed")).contains("true");
    }
  }

  @Test
  void a304KeepsTheContentLengthOfTheRepresentationTheUpstreamGave() throws Exception {
    try (RawUpstream upstream =
            new RawUpstream(
                "HTTP/1.1 304 Not Modified\r\nETag: \"v2\"\r\nContent-Length: 1234\r\n\r\n");
        TestGateway gw = TestGateway.start("--upstream", upstream.url())) {
      String key = key();

      String passedThrough = exchange(gw, "GET /things/2 HTTP/1.1\r\nHost: gateway\r\n\r\n");
      String keyed =
          "POST /payments/cached-length HTTP/1.1\r\nHost: gateway\r\nIdempotency-Key: "
              + key
              + "\r\nContent-Length: 2\r\n\r\n{}";
      String first = exchange(gw, keyed);
      String replay = exchange(gw, keyed);

      for (String answer : List.of(passedThrough, first)) {
        assertThat(answer).startsWith("HTTP/1.1 304 ").contains("\r\nContent-Length: 1234\r\n");
      }
      // once-http stores no framing fields, so the replay has no length at all: never a false 0.
      assertThat(replay)
          .startsWith("HTTP/1.1 304 ")
          .contains("\r\nIdempotent-Replayed: true\r\n")
          .doesNotContainIgnoringCase("Content-Length: 0");
    }
  }

  /**
   * A client connection's reads wait for the selector once its socket was found empty ({@link
   * SparingEndPoint}): requests whose pieces come with pauses between them, guarded and not, must
   * still be read whole, and the connection must serve the next request after a pause.
   */
  @Test
  void requestsArrivingInPiecesOnOneConnectionAreReadWhole() throws Exception {
    try (RawUpstream upstream = new RawUpstream(OK);
        TestGateway gw = TestGateway.start("--upstream", upstream.url());
        Socket socket = new Socket("127.0.0.1", gw.gateway.port())) {
      socket.setSoTimeout(10_000);
      String guarded = key();
      for (String key : new String[] {null, guarded}) {
        String keyLine = key == null ? "" : "Idempotency-Key: " + key + "\r\n";
        for (String piece :
            new String[] {
              "POST /payments/pieces HTTP/1.1\r\nHost: gateway\r\nApi-Key: ",
              Client.MERCHANT + "\r\n" + keyLine + "Content-Type: application/json\r\n",
              "Content-Length: 14\r\n\r\n{\"amount\":",
              "100}"
            }) {
          socket.getOutputStream().write(piece.getBytes(StandardCharsets.ISO_8859_1));
          socket.getOutputStream().flush();
          Thread.sleep(200);
        }

        assertThat(readAnswer(socket.getInputStream())).startsWith("HTTP/1.1 200 ");
      }
      assertThat(upstream.heads())
          .hasSize(2)
          .allMatch(head -> head.startsWith("POST /payments/pieces HTTP/1.1\r\n"));
      assertThat(upstream.bodies()).containsExactly("{\"amount\":100}", "{\"amount\":100}");
      assertThat(upstream.runs(guarded)).isEqualTo(1);
    }
  }

  /**
   * A client connection stays in the selector's read set while its request is served ({@link
   * SparingEndPoint}): a client that sends its next request ahead, or shuts its side, while the
   * upstream is slow makes the socket readable with nobody to read it. The proxy must neither spin
   * on that (the selector would report it ready again and again) nor lose it: the next request is
   * served after the first, and a half-closed client still gets its answer.
   */
  @Test
  void aClientThatSendsAheadOrShutsItsSideWhileServedIsNeitherSpunOnNorLost() throws Exception {
    try (TestGateway gw = TestGateway.start("--upstream-timeout", "5s");
        Socket socket = new Socket("127.0.0.1", gw.gateway.port())) {
      socket.setSoTimeout(10_000);
      OutputStream out = socket.getOutputStream();
      out.write(request("POST", "/slow/1500", "{}"));
      out.flush();
      Thread.sleep(300); // the first request is upstream now, its connection not being read
      long before = proxyCpuNanos();
      out.write(request("POST", "/payments/ahead", "{\"n\":2}"));
      out.flush();
      Thread.sleep(1_000);
      long spent = proxyCpuNanos() - before;

      InputStream in = socket.getInputStream();
      assertThat(readAnswer(in)).startsWith("HTTP/1.1 201 ");
      assertThat(readAnswer(in)).startsWith("HTTP/1.1 201 ");
      assertThat(gw.upstream.runs("/payments/ahead")).isEqualTo(1);
      assertThat(spent)
          .as("the proxy's CPU time while a request waited behind a slow one")
          .isLessThan(TimeUnit.MILLISECONDS.toNanos(250));
    }
    try (TestGateway gw = TestGateway.start("--upstream-timeout", "5s");
        Socket socket = new Socket("127.0.0.1", gw.gateway.port())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(request("POST", "/slow/1500", "{}"));
      socket.getOutputStream().flush();
      Thread.sleep(300);
      long before = proxyCpuNanos();
      socket.shutdownOutput();
      Thread.sleep(1_000);
      long spent = proxyCpuNanos() - before;

      assertThat(readAnswer(socket.getInputStream())).startsWith("HTTP/1.1 201 ");
      assertThat(spent)
          .as("the proxy's CPU time while a half-closed client waited for a slow upstream")
          .isLessThan(TimeUnit.MILLISECONDS.toNanos(250));
    }
  }

  /**
   * A client that hangs up once its keyed request is upstream, politely or with a reset, is seen
   * gone while the request is served (the socket is read on once the request is in whole). The
   * effect has happened or is happening, so the key is never released: the upstream's answer is
   * recorded as it comes, and the retry replays it, long before the 30 s lease could have run out.
   */
  @Test
  void aClientThatHangsUpWhileItsKeyedRequestIsUpstreamLeavesTheKeyDoneForItsRetry()
      throws Exception {
    try (TestGateway gw = TestGateway.start()) {
      for (boolean reset : List.of(false, true)) {
        String key = key();
        String path = "/slow/800/" + (reset ? "reset" : "close");
        try (Socket socket = new Socket("127.0.0.1", gw.gateway.port())) {
          socket.getOutputStream().write(Client.rawPost(path, key, 2, "{}"));
          socket.getOutputStream().flush();
          Thread.sleep(200); // upstream now, its answer 600 ms away
          if (reset) {
            socket.setSoLinger(true, 0);
          }
        }

        HttpResponse<String> retry = gw.client.postJson(path, key, "{}");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (retry.body().contains(ProblemType.IN_FLIGHT.slug())
            && System.nanoTime() < deadline) {
          Thread.sleep(50); // the first exchange is still upstream
          retry = gw.client.postJson(path, key, "{}");
        }

        assertThat(retry.statusCode()).as("the retry after a %s", path).isEqualTo(201);
        assertThat(retry.headers().firstValue("Idempotent-Replayed")).contains("true");
        assertThat(gw.upstream.runs(path)).isEqualTo(1);
      }
    }
  }

  /**
   * What a client sends ahead while a request is served waits in the sockets' buffers: the gateway
   * takes the next head of it and what came with that head in one read, so a client cannot fill the
   * gateway's heap with requests it has not reached yet. A flood several times what the kernel
   * buffers between the two ends must stall (a gateway reading everything would take it all within
   * the time given).
   */
  @Test
  void aClientFloodingRequestsAheadWhileServedStallsInItsOwnSocket() throws Exception {
    long buffered = kernelBufferLimit();
    long flood = Math.max(48L << 20, 3 * buffered);
    try (TestGateway gw = TestGateway.start("--upstream-timeout", "5s");
        SocketChannel channel =
            SocketChannel.open(new InetSocketAddress("127.0.0.1", gw.gateway.port()))) {
      channel.write(ByteBuffer.wrap(request("POST", "/slow/1500", "{}")));
      Thread.sleep(300); // the first request is upstream now
      ByteBuffer ahead =
          ByteBuffer.wrap(
              ("GET /ahead HTTP/1.1\r\nHost: gateway\r\nX-Pad: " + "x".repeat(4_000) + "\r\n\r\n")
                  .getBytes(StandardCharsets.ISO_8859_1));
      channel.configureBlocking(false);
      long sent = 0;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
      while (sent < flood && System.nanoTime() < deadline) {
        int n = channel.write(ahead);
        if (!ahead.hasRemaining()) {
          ahead.rewind();
        }
        if (n == 0) {
          Thread.sleep(5);
        }
        sent += n;
      }

      assertThat(sent)
          .as("bytes sent ahead while a request was served, of %d offered", flood)
          .isLessThan(buffered);
      channel.configureBlocking(true);
      channel.socket().setSoTimeout(10_000);
      assertThat(readAnswer(channel.socket().getInputStream())).startsWith("HTTP/1.1 201 ");
    }
  }

  /**
   * The most the kernel holds between a client and the gateway on loopback: the largest send buffer
   * and the largest receive buffer it grows a socket's to, and a mebibyte for the gateway's one
   * read and what is in flight.
   */
  private static long kernelBufferLimit() throws IOException {
    long limit = 1 << 20;
    for (String file : List.of("tcp_wmem", "tcp_rmem")) {
      Path path = Path.of("/proc/sys/net/ipv4", file);
      if (!Files.exists(path)) {
        limit += 8L << 20;
        continue;
      }
      // Not Files.readString: it trusts the file's size, and /proc gives none (it reads one byte).
      try (InputStream in = Files.newInputStream(path)) {
        String[] sizes =
            new String(in.readAllBytes(), StandardCharsets.US_ASCII).trim().split("\\s+");
        limit += Long.parseLong(sizes[2]);
      }
    }
    return limit;
  }

  private static byte[] request(String method, String path, String body) {
    return (method
            + " "
            + path
            + " HTTP/1.1\r\nHost: gateway\r\nApi-Key: "
            + Client.MERCHANT
            + "\r\nContent-Type: application/json\r\nContent-Length: "
            + body.length()
            + "\r\n\r\n"
            + body)
        .getBytes(StandardCharsets.ISO_8859_1);
  }

  /**
   * The CPU time of the proxy's threads in this JVM, so far: the event loops on the Netty core, the
   * pool its selectors run on on Jetty's. Threads of that name must be found: a sum over none would
   * be zero whatever the proxy spent, as it was on the Netty core until the name was taken from it.
   */
  private static long proxyCpuNanos() {
    String proxyThreads = TestCore.netty() ? NettyLoops.THREADS : JettyPort.THREADS;
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    long total = 0;
    int found = 0;
    for (ThreadInfo thread : threads.dumpAllThreads(false, false)) {
      if (thread.getThreadName().startsWith(proxyThreads)) {
        found++;
        total += Math.max(0, threads.getThreadCpuTime(thread.getThreadId()));
      }
    }
    assertThat(found).as("the proxy's threads, named %s*", proxyThreads).isPositive();
    return total;
  }

  /** One answer with a Content-Length, head and body, read from a kept connection. */
  private static String readAnswer(InputStream in) throws IOException {
    String head = HostileClients.readHead(in);
    if (head == null) {
      throw new EOFException("the connection closed before an answer");
    }
    int length = contentLength(head);
    return head + new String(in.readNBytes(Math.max(length, 0)), StandardCharsets.ISO_8859_1);
  }

  /**
   * Sends {@code request} on a fresh connection and returns the answer's head and whatever of its
   * body came with it, up to the end of the head plus 1 KiB.
   */
  private static String exchange(TestGateway gw, String request) throws IOException {
    try (Socket socket = new Socket("127.0.0.1", gw.gateway.port())) {
      socket.setSoTimeout(10_000);
      socket.getOutputStream().write(request.getBytes(StandardCharsets.ISO_8859_1));
      InputStream in = socket.getInputStream();
      StringBuilder answer = new StringBuilder();
      int afterHead = -1;
      for (int b; answer.length() < afterHead + 1024 || afterHead < 0; ) {
        b = in.read();
        if (b < 0) {
          break;
        }
        answer.append((char) b);
        if (afterHead < 0 && answer.indexOf("\r\n\r\n") >= 0) {
          afterHead = answer.length();
          int length = contentLength(answer.toString());
          if (length >= 0) {
            answer.append(new String(in.readNBytes(length), StandardCharsets.ISO_8859_1));
            break;
          }
        }
      }
      return answer.toString();
    }
  }

  /** The Content-Length of a response head, or -1; a 304's is the representation's: no body. */
  private static int contentLength(String head) {
    if (head.startsWith("HTTP/1.1 304 ")) {
      return 0;
    }
    for (String line : head.split("\r\n")) {
      if (lower(line).startsWith("content-length:")) {
        return Integer.parseInt(line.substring(15).trim());
      }
    }
    return -1;
  }

  private static String lower(String text) {
    return text.toLowerCase(Locale.ROOT);
  }
}
