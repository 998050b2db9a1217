package dev.once.gateway;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/**
 * Records everything written to {@code System.out} and {@code System.err} (where slf4j-simple
 * writes every log line) until closed, still passing it through.
 */
final class RecordingOutput implements AutoCloseable {

  private final PrintStream out = System.out;
  private final PrintStream err = System.err;
  private final ByteArrayOutputStream recorded = new ByteArrayOutputStream();

  RecordingOutput() {
    System.setOut(new PrintStream(new Tee(out, recorded), true, StandardCharsets.UTF_8));
    System.setErr(new PrintStream(new Tee(err, recorded), true, StandardCharsets.UTF_8));
  }

  String text() {
    synchronized (recorded) {
      return recorded.toString(StandardCharsets.UTF_8);
    }
  }

  @Override
  public void close() {
    System.setOut(out);
    System.setErr(err);
  }

  private static final class Tee extends OutputStream {
    private final OutputStream through;
    private final ByteArrayOutputStream copy;

    Tee(OutputStream through, ByteArrayOutputStream copy) {
      this.through = through;
      this.copy = copy;
    }

    @Override
    public void write(int b) {
      synchronized (copy) {
        copy.write(b);
      }
      try {
        through.write(b);
      } catch (java.io.IOException ignored) {
        // the copy is what the test reads
      }
    }

    @Override
    public void write(byte[] b, int off, int len) {
      synchronized (copy) {
        copy.write(b, off, len);
      }
      try {
        through.write(b, off, len);
      } catch (java.io.IOException ignored) {
        // the copy is what the test reads
      }
    }
  }
}
