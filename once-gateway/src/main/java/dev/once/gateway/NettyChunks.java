package dev.once.gateway;

import io.netty.buffer.ByteBuf;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.io.Retainable;

/**
 * Netty's bytes in the proxy rules' vocabulary ({@link Content.Chunk}): the chunk is a view of the
 * buffer, and its retain and release are the buffer's reference count, so bytes pass from a socket
 * to the rules, and on to the other socket, without a copy.
 */
final class NettyChunks {

  private NettyChunks() {}

  /**
   * The buffer's readable bytes as a chunk that owns the caller's reference: releasing the chunk
   * releases the buffer.
   */
  static Content.Chunk of(ByteBuf buffer, boolean last) {
    return Content.Chunk.asChunk(buffer.nioBuffer(), last, new Counted(buffer));
  }

  /** A buffer's reference count, as Jetty's chunks count theirs. */
  private record Counted(ByteBuf buffer) implements Retainable {
    @Override
    public boolean canRetain() {
      return true;
    }

    @Override
    public void retain() {
      buffer.retain();
    }

    @Override
    public boolean release() {
      return buffer.release();
    }
  }
}
