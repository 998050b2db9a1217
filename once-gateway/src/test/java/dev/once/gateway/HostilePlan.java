package dev.once.gateway;

import dev.once.Outcome;
import dev.once.http.Headers;
import dev.once.http.HttpOutcomes;
import dev.once.http.StoredResponse;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.zip.GZIPOutputStream;

/**
 * A seeded run of hostile traffic: what the upstream does with each request and what each client
 * does to the gateway. Everything random is drawn here, from one seed, so a seed names a run: the
 * same seed gives the same acts (the threads' interleaving is the only thing it cannot fix).
 *
 * <p>A request's act is found by its path, {@code /hostile/<act>}: every attempt with one key goes
 * to one path, so its retries meet the same upstream behaviour.
 */
record HostilePlan(long seed, List<UpstreamAct> acts, List<ClientAct> clients) {

  /** Where the upstream's answer is cut, if anywhere. */
  enum Cut {
    NONE,
    /** Reset (RST) once the head is read: no byte of an answer. */
    RESET_AFTER_HEAD,
    /** Closed (FIN) once the head is read: no byte of an answer. */
    CLOSE_AFTER_HEAD,
    /** Closed in the middle of the status line. */
    IN_STATUS_LINE,
    /** Closed in the middle of the header section. */
    IN_HEADERS,
    /** Closed after half of the promised body. */
    IN_BODY,
    /** Reset after half of the promised body. */
    RESET_IN_BODY
  }

  /** How the answer's body is delimited. */
  enum Framing {
    LENGTH,
    CHUNKED,
    /** No length: the body ends when the upstream closes the connection. */
    CLOSE
  }

  /** Content coding of the body; the gateway passes it through untouched. */
  enum Coding {
    IDENTITY,
    GZIP,
    /** {@code Content-Encoding: gzip} on bytes that are no gzip. */
    BROKEN_GZIP
  }

  /** The header section. */
  enum Fields {
    PLAIN,
    /** Over the gateway's header limit. */
    HUGE,
    /** Many small fields, under the limit. */
    MANY,
    /** Fields named in {@code Connection}, empty values, odd spacing and bytes above 0x7F. */
    ODD,
    /**
     * A {@code Content-Length} and body on a status that has none (204, 304) or a HEAD: the body's
     * bytes are a second response, waiting on the pooled connection for the next request.
     */
    SMUGGLED
  }

  /** When the upstream waits, and how long. */
  enum Delay {
    NONE,
    BEFORE_STATUS,
    IN_BODY
  }

  /** An interim response the upstream sends before its answer. */
  enum Interim {
    NONE,
    CONTINUE,
    EARLY_HINTS
  }

  /** What the upstream does with the requests of one path. */
  record UpstreamAct(
      int id,
      int status,
      Interim interim,
      Framing framing,
      Coding coding,
      Fields fields,
      Cut cut,
      Delay delay,
      long delayMillis,
      boolean readsBody,
      byte[] body) {

    /** The body as sent: {@link #body} encoded by {@link #coding}. */
    byte[] wire() {
      return switch (coding) {
        case IDENTITY -> body;
        case GZIP -> gzip(body);
        case BROKEN_GZIP ->
            ("not gzip " + new String(body, StandardCharsets.US_ASCII))
                .getBytes(StandardCharsets.US_ASCII);
      };
    }

    /**
     * Whether a client may get {@code got} as a whole body: the body sent, or, if the body is
     * delimited by the close of the connection and cut, any part of it from the start. To everyone
     * downstream such a cut looks like the end (and after a reset, Linux reports the end of the
     * stream to every read but the first, losing what was unread).
     */
    boolean delivers(byte[] got) {
      byte[] wire = wire();
      boolean cutInBody = cut == Cut.IN_BODY || cut == Cut.RESET_IN_BODY;
      if (framing == Framing.CLOSE && cutInBody) {
        return got.length <= wire.length
            && java.util.Arrays.equals(got, java.util.Arrays.copyOf(wire, got.length));
      }
      return java.util.Arrays.equals(got, wire);
    }

    /**
     * Whether a complete answer with this status makes the gateway release the key (a transient
     * status), so a retry may run again: the ledger allows a second run after one.
     */
    boolean mayRelease() {
      // The routes' own rule (HttpOutcomes.DEFAULT), not a copy of it: a copy missed 423 Locked, so
      // a legitimate second run after a 423 read as a double execution. A status that is no final
      // one (1xx, over 599) is a protocol error, which counts as done.
      return status >= 200
          && status <= 599
          && HttpOutcomes.DEFAULT.classify(new StoredResponse(status, Headers.of(), new byte[0]))
              == Outcome.TRANSIENT;
    }
  }

  /** What a client does. */
  enum Kind {
    /** Sends the whole request and reads the answer. */
    COMPLETE,
    /** Declares a body and sends none of it. */
    HEAD_ONLY,
    /** Sends its body a few bytes at a time. */
    TRICKLE,
    /** Closes once the head is sent. */
    ABORT_AFTER_HEAD,
    /** Closes in the middle of the body. */
    ABORT_IN_BODY,
    /** Closes once the whole request is sent, before any answer. */
    ABORT_AFTER_REQUEST,
    /** Closes once the status line of the answer has arrived. */
    ABORT_AFTER_STATUS,
    /** Sends {@code Expect: 100-continue} and the body only after the interim answer. */
    EXPECT_CONTINUE,
    /** Sends this request and an unkeyed GET of another act in one write. */
    PIPELINED
  }

  /**
   * One connection's worth of client behaviour. {@code key} is null for an unkeyed request; {@code
   * startMillis} is when it starts, from the start of the run.
   */
  record ClientAct(
      int id,
      int act,
      String method,
      String key,
      boolean malformedKey,
      Kind kind,
      int bodyBytes,
      long startMillis,
      int pipelinedAct) {

    String path() {
      return "/hostile/" + act;
    }
  }

  static final int MAX_BODY = 48 << 10;

  /**
   * {@code keys} keys with one to three attempts each, and {@code unkeyed} requests without one.
   */
  static HostilePlan generate(
      long seed, int keys, int unkeyed, long spreadMillis, long pastDeadline) {
    Random random = new Random(seed);
    List<UpstreamAct> acts = new ArrayList<>();
    List<ClientAct> clients = new ArrayList<>();
    for (int k = 0; k < keys + unkeyed; k++) {
      acts.add(upstreamAct(random, acts.size(), pastDeadline));
      boolean keyed = k < keys;
      boolean malformed = keyed && random.nextInt(20) == 0;
      String key = !keyed ? null : malformed ? "bad key " + k : "h" + seed + "-" + k;
      String method = keyed ? "POST" : new String[] {"POST", "GET", "HEAD"}[random.nextInt(3)];
      int bodyBytes =
          !method.equals("POST") ? 0 : 1 + random.nextInt(random.nextInt(8) == 0 ? MAX_BODY : 512);
      int attempts = keyed && !malformed ? 1 + random.nextInt(3) : 1;
      long first = (long) (random.nextDouble() * spreadMillis);
      for (int a = 0; a < attempts; a++) {
        // Attempts of one key start within 1.5 s of each other: the ledger rule needs their leases
        // to overlap (see HostileRun).
        long start = a == 0 ? first : first + random.nextInt(1_500);
        Kind kind = kind(random, method);
        int pipelined = kind == Kind.PIPELINED ? random.nextInt(acts.size()) : -1;
        clients.add(
            new ClientAct(
                clients.size(), k, method, key, malformed, kind, bodyBytes, start, pipelined));
      }
    }
    return new HostilePlan(seed, List.copyOf(acts), List.copyOf(clients));
  }

  private static Kind kind(Random random, String method) {
    if (random.nextInt(2) == 0) {
      return Kind.COMPLETE;
    }
    Kind[] all = Kind.values();
    Kind kind = all[random.nextInt(all.length)];
    if (!method.equals("POST")
        && kind != Kind.COMPLETE
        && kind != Kind.ABORT_AFTER_REQUEST
        && kind != Kind.ABORT_AFTER_STATUS) {
      return Kind.COMPLETE; // a GET or HEAD without a body has nothing to trickle or expect
    }
    return kind;
  }

  private static UpstreamAct upstreamAct(Random random, int id, long pastDeadline) {
    int status = status(random);
    Fields fields = pick(random, Fields.values(), 6);
    if (fields == Fields.SMUGGLED) {
      status = random.nextBoolean() ? 204 : 304;
    }
    Cut cut = pick(random, Cut.values(), 4);
    Delay delay = pick(random, Delay.values(), 6);
    long delayMillis =
        delay == Delay.NONE ? 0 : random.nextInt(4) == 0 ? pastDeadline : 20 + random.nextInt(300);
    int size = random.nextInt(10) == 0 ? random.nextInt(600 << 10) : random.nextInt(3_000);
    byte[] body = new byte[size];
    for (int i = 0; i < size; i++) {
      body[i] = (byte) ('a' + random.nextInt(26));
    }
    return new UpstreamAct(
        id,
        status,
        pick(random, Interim.values(), 8),
        pick(random, Framing.values(), 3),
        pick(random, Coding.values(), 6),
        fields,
        cut,
        delay,
        delayMillis,
        random.nextInt(6) != 0,
        body);
  }

  /** A status from 100 to 999, mostly ordinary ones. */
  private static int status(Random random) {
    int[] common = {200, 201, 202, 204, 301, 304, 400, 401, 404, 409, 422, 429, 500, 502, 503};
    return switch (random.nextInt(10)) {
      case 0 -> 100 + random.nextInt(900); // anything, a final 1xx and 600-999 included
      case 1 -> 100 + random.nextInt(4); // a final 1xx
      case 2 -> 600 + random.nextInt(400);
      default -> common[random.nextInt(common.length)];
    };
  }

  /** The first value {@code 1 - 1/odds} of the time, else any. */
  private static <T> T pick(Random random, T[] values, int odds) {
    return random.nextInt(odds) != 0 ? values[0] : values[random.nextInt(values.length)];
  }

  static byte[] gzip(byte[] bytes) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    try (GZIPOutputStream gz = new GZIPOutputStream(out)) {
      gz.write(bytes);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return out.toByteArray();
  }
}
