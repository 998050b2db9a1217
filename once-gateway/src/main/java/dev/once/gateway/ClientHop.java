package dev.once.gateway;

import dev.once.http.Headers;
import java.net.SocketAddress;
import java.nio.ByteBuffer;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Scheduler;
import org.jspecify.annotations.Nullable;

/**
 * The client's side of one proxied request, as the server that parsed it presents it: the request's
 * head and body, and the answer going back. The proxy's rules ({@link ProxyHandler}, {@link
 * ProxyExchange}, {@link BodyReader}, {@link UpstreamFields}, {@link UpstreamResponse}) reach the
 * client only through this, so they are written once whatever carries the bytes; {@link JettyHop}
 * is Jetty's server.
 *
 * <p>The request's fields are the rules' own {@link Headers}, built once from what the core parsed,
 * so that no core copies them into another core's type on the way. The rest of the vocabulary is
 * Jetty's utility types, not its server's: the answer's fields ({@link HttpFields}), content with
 * retain and release ({@link Content.Source}), completion ({@link Callback}) and timers ({@link
 * Scheduler}). They are small, asynchronous and carry no server with them; the management server is
 * Jetty's in any case.
 */
interface ClientHop {

  /** The method as the client wrote it (not upper-cased). */
  String method();

  /** The path as the client wrote it: what goes upstream, and what the access line shows. */
  String path();

  /**
   * The path decoded and normalised, as routes match it, so that no spelling of a path escapes its
   * route.
   */
  String decodedPath();

  /** The query as the client wrote it, without the {@code ?}; null if there is none. */
  @Nullable String query();

  /** The scheme the client used: {@code http} or {@code https}. */
  String scheme();

  /** Whether the client speaks HTTP/1.1, so a body of unknown length can go back chunked. */
  boolean http11();

  /** The request's fields as they came, in order and as spelled. */
  Headers headers();

  /** The request body's declared length; -1 if it is chunked or has none declared. */
  long declaredLength();

  /** The connection's far end, as the socket has it. */
  SocketAddress peer();

  /** The far end's address as text, as it goes into {@code X-Forwarded-For}. */
  String peerAddress();

  /** The request body, read with demand: no thread waits for it. */
  Content.Source body();

  /**
   * Reads and drops the body that has already arrived; true if that was all of it, so the
   * connection can take the next request after the answer.
   */
  boolean consumeAvailable();

  /** Timers for deadlines on this request (its body, a drain). */
  Scheduler scheduler();

  /** Sets the answer's status; before its first write. */
  void status(int status);

  /** The answer's fields, to fill before its first write. */
  HttpFields.Mutable answerFields();

  /**
   * Writes part of the answer, its head with the first write; {@code last} ends it. One write at a
   * time: the next only after {@code done} completed.
   */
  void write(boolean last, ByteBuffer bytes, Callback done);

  /** Whether the answer's head has gone out, so that it can no longer be replaced by another. */
  boolean committed();

  /**
   * Ends the request, with the answer complete or, with a failure, cut: the connection goes on to
   * its next request or closes. Called once.
   */
  void end(@Nullable Throwable failure);
}
