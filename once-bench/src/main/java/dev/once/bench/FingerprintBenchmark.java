package dev.once.bench;

import dev.once.Fingerprint;
import dev.once.fingerprint.Fingerprinter;
import dev.once.fingerprint.JsonCanonicalizer;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The cost of fingerprinting a JSON request body against its floor, a bare SHA-256 of the same
 * bytes with a reused digest (the strategy the fingerprinter uses too):
 *
 * <ul>
 *   <li>{@code sha256} — the floor;
 *   <li>{@code sha256NewDigest} — the same with {@code MessageDigest.getInstance} per call, which
 *       is what reusing a digest per thread saves;
 *   <li>{@code canonicalize} — RFC 8785 canonicalisation alone, returning a fresh array;
 *   <li>{@code canonicalizeExact} — the same with exact numbers, the form fingerprints hash;
 *   <li>{@code fingerprint} — {@link Fingerprinter#json}: canonicalise, hash with the context, hex,
 *       and hash the same bytes again for the version-1 fingerprint every fingerprint carries;
 *   <li>{@code fingerprintWithExclusions} — the same with two excluded pointers;
 *   <li>{@code fingerprintContent} — {@link Fingerprinter#content} as once-http calls it, with
 *       {@code application/json; charset=utf-8}.
 * </ul>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@State(Scope.Thread)
@Fork(1)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
public class FingerprintBenchmark {

  @Param({"100", "1024", "65536"})
  public int size;

  private byte[] body;
  private MessageDigest sha256;
  private Fingerprinter fingerprinter;
  private Fingerprinter excluding;

  @Setup
  public void setUp() throws NoSuchAlgorithmException {
    body = PaymentBodies.ofSize(size);
    sha256 = MessageDigest.getInstance("SHA-256");
    fingerprinter = Fingerprinter.defaults();
    excluding =
        Fingerprinter.builder()
            .exclude("/metadata/trace_id")
            .exclude("/metadata/requested_at")
            .build();
    JsonCanonicalizer.canonicalize(body); // fail fast if the generated body is not I-JSON
  }

  @Benchmark
  public byte[] sha256() {
    sha256.update(body);
    return sha256.digest();
  }

  @Benchmark
  public byte[] sha256NewDigest() throws NoSuchAlgorithmException {
    return MessageDigest.getInstance("SHA-256").digest(body);
  }

  @Benchmark
  public byte[] canonicalize() {
    return JsonCanonicalizer.canonicalize(body);
  }

  @Benchmark
  public byte[] canonicalizeExact() {
    return JsonCanonicalizer.canonicalizeExact(body);
  }

  @Benchmark
  public Fingerprint fingerprint() {
    return fingerprinter.json(body, "POST", "/api/payments");
  }

  @Benchmark
  public Fingerprint fingerprintWithExclusions() {
    return excluding.json(body, "POST", "/api/payments");
  }

  @Benchmark
  public Fingerprint fingerprintContent() {
    return fingerprinter.content(
        "application/json; charset=utf-8", body, "POST", "/api/payments", "");
  }
}
