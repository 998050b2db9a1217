package dev.once.servlet;

import jakarta.servlet.ReadListener;
import jakarta.servlet.ServletInputStream;
import java.io.IOException;
import org.jspecify.annotations.Nullable;

/** A request body already in memory, served as the container's stream would serve it. */
final class BodyInputStream extends ServletInputStream {

  private final byte[] body;
  private int position;
  private @Nullable ReadListener listener;

  BodyInputStream(byte[] body) {
    this.body = body;
  }

  @Override
  public int read() {
    return position < body.length ? body[position++] & 0xFF : -1;
  }

  @Override
  public int read(byte[] b, int off, int len) {
    java.util.Objects.checkFromIndexSize(off, len, b.length);
    if (len == 0) {
      return 0;
    }
    if (position >= body.length) {
      return -1;
    }
    int n = Math.min(len, body.length - position);
    System.arraycopy(body, position, b, off, n);
    position += n;
    return n;
  }

  @Override
  public long skip(long n) {
    long skipped = Math.max(0, Math.min(n, body.length - position));
    position += (int) skipped;
    return skipped;
  }

  @Override
  public int available() {
    return body.length - position;
  }

  @Override
  public boolean isFinished() {
    return position >= body.length;
  }

  @Override
  public boolean isReady() {
    return true;
  }

  /**
   * Every byte is already here, so the listener hears at once that data is available and, once it
   * has read everything, that all data was read.
   */
  @Override
  public void setReadListener(ReadListener readListener) {
    if (readListener == null) {
      throw new NullPointerException("readListener");
    }
    if (listener != null) {
      throw new IllegalStateException("a ReadListener is already set");
    }
    listener = readListener;
    try {
      if (!isFinished()) {
        listener.onDataAvailable();
      }
      if (isFinished()) {
        listener.onAllDataRead();
      }
    } catch (IOException e) {
      listener.onError(e);
    }
  }
}
