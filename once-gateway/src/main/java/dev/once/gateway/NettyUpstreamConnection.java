package dev.once.gateway;

import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelPipeline;
import io.netty.handler.codec.http.HttpDecoderConfig;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMessage;
import io.netty.handler.codec.http.HttpRequestEncoder;
import io.netty.handler.codec.http.HttpResponseDecoder;
import io.netty.handler.codec.http.HttpVersion;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.ReferenceCountUtil;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * One connection to the upstream ({@link NettyUpstream}): its pipeline, and the exchange it carries
 * now, if any, to which it hands what the decoder read and what happened to the socket. Touched
 * only from its loop.
 *
 * <p>A connection between exchanges reads, so that it learns at once of a close and of any byte the
 * upstream sends: bytes that belong to no request (the rest of a body a bodiless answer announced,
 * a late second answer) would otherwise be read as the answer to the next request sent on it,
 * another client's. Such a connection is closed, never used again.
 */
final class NettyUpstreamConnection extends ChannelInboundHandlerAdapter {

  private final Decoder decoder;
  private final Channel channel;

  /** The exchange this connection carries; null between exchanges. */
  private @Nullable NettyUpstreamExchange exchange;

  /** Whether bytes arrived that no exchange asked for: the connection is never reused. */
  private boolean broken;

  private long idleSince;

  /** Sets up {@code channel}'s pipeline, before it is registered. */
  NettyUpstreamConnection(Channel channel, int maxHeaderBytes, @Nullable SslHandler tls) {
    this.channel = channel;
    // Parse more than the limit, so that a response over it is known to be one (the upstream ran)
    // rather than a broken connection (which may not have), as JettyUpstream does.
    this.decoder =
        new Decoder(
            new HttpDecoderConfig()
                .setMaxInitialLineLength(Math.max(4096, 4 * maxHeaderBytes))
                .setMaxHeaderSize(4 * maxHeaderBytes)
                .setMaxChunkSize(Math.max(16 << 10, maxHeaderBytes + UpstreamFields.HEADER_SLACK)));
    ChannelPipeline pipeline = channel.pipeline();
    if (tls != null) {
      pipeline.addLast(tls);
    }
    pipeline.addLast(new Between());
    pipeline.addLast(new HttpRequestEncoder());
    pipeline.addLast(decoder);
    pipeline.addLast(this);
  }

  Channel channel() {
    return channel;
  }

  /** Takes {@code exchange} on: what the decoder reads from now on is its answer. */
  void carry(NettyUpstreamExchange exchange) {
    this.exchange = exchange;
  }

  /** The exchange ended: what arrives from now on belongs to no request. */
  void done() {
    exchange = null;
  }

  /**
   * Whether the connection can carry another request: open, nothing read that no exchange asked
   * for, and no byte of a next answer already in the decoder.
   */
  boolean reusable() {
    return !broken && channel.isActive() && !decoder.holdsBytes();
  }

  /** Between exchanges, since {@code now}: it reads, to learn of a close or of stray bytes. */
  void idle(long now) {
    idleSince = now;
    channel.read();
  }

  long idleSince() {
    return idleSince;
  }

  /** Asks the socket for more of the answer. */
  void read() {
    channel.read();
  }

  /** Closes the connection; the lane learns of it from the channel's close future. */
  @SuppressWarnings("FutureReturnValueIgnored") // its outcome is the close future's
  void close() {
    channel.close();
  }

  @Override
  public void channelRead(ChannelHandlerContext ctx, Object msg) {
    NettyUpstreamExchange carried = exchange;
    if (carried == null) {
      // What the decoder made of bytes after the end of the last answer, in the same read.
      ReferenceCountUtil.release(msg);
      strayed();
      return;
    }
    carried.received(msg);
  }

  @Override
  public void channelReadComplete(ChannelHandlerContext ctx) {
    NettyUpstreamExchange carried = exchange;
    if (carried != null) {
      carried.readComplete();
    }
  }

  @Override
  public void channelWritabilityChanged(ChannelHandlerContext ctx) {
    NettyUpstreamExchange carried = exchange;
    if (carried != null && ctx.channel().isWritable()) {
      carried.writable();
    }
  }

  @Override
  public void channelInactive(ChannelHandlerContext ctx) {
    NettyUpstreamExchange carried = exchange;
    if (carried != null) {
      carried.closed();
    }
  }

  @Override
  public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
    NettyUpstreamExchange carried = exchange;
    if (carried != null) {
      carried.broke(cause);
    }
    close();
  }

  private void strayed() {
    broken = true;
    close();
  }

  /**
   * Before the decoder: bytes that arrive between exchanges belong to no request, and close the
   * connection before the decoder could keep them for the next.
   */
  private final class Between extends ChannelInboundHandlerAdapter {
    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
      if (exchange == null) {
        ReferenceCountUtil.release(msg);
        strayed();
        return;
      }
      ctx.fireChannelRead(msg);
    }
  }

  /**
   * Netty's response decoder, told which answers have no body: that to a HEAD, besides a 1xx, 204
   * and 304, whatever their fields say. Netty drops the {@code Transfer-Encoding} of such an
   * answer; it is kept here, so that the rules see the head as the upstream sent it ({@link
   * UpstreamResponse} closes the connection after a bodiless answer that announces a body).
   */
  private final class Decoder extends HttpResponseDecoder {
    private @Nullable List<String> dropped;

    Decoder(HttpDecoderConfig config) {
      super(config);
    }

    @Override
    protected boolean isContentAlwaysEmpty(HttpMessage msg) {
      NettyUpstreamExchange carried = exchange;
      boolean empty = (carried != null && carried.head()) || super.isContentAlwaysEmpty(msg);
      dropped =
          empty && msg.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)
              ? msg.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING)
              : null;
      return empty;
    }

    /**
     * Netty takes any {@code NAME/x.y} for a version, so bytes before an answer ({@code
     * helloHTTP/1.1 200}) would pass for one: only HTTP/1 is. A status line read tells the exchange
     * that the upstream began its answer.
     */
    @Override
    protected HttpMessage createMessage(String[] initialLine) {
      HttpMessage message = super.createMessage(initialLine);
      HttpVersion version = message.protocolVersion();
      if (!version.protocolName().equals("HTTP") || version.majorVersion() != 1) {
        throw new IllegalArgumentException("no HTTP/1 status line: " + version.text());
      }
      NettyUpstreamExchange carried = exchange;
      if (carried != null) {
        carried.statusLine();
      }
      return message;
    }

    boolean holdsBytes() {
      return actualReadableBytes() > 0;
    }
  }

  /**
   * The {@code Transfer-Encoding} values the decoder dropped from the answer it just delivered (see
   * {@link Decoder}); empty if none.
   */
  List<String> droppedTransferEncoding() {
    List<String> values = decoder.dropped;
    decoder.dropped = null;
    return values == null ? List.of() : values;
  }
}
