import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;
import org.rocksdb.Options;
import org.rocksdb.RocksDB;
import org.rocksdb.RocksDBException;
import org.rocksdb.WriteBatch;
import org.rocksdb.WriteOptions;

/**
 * RocksDB's floor for the embedded store's claim+finish, the same shape as {@code sqlite_floor.py},
 * so the two engines can be read side by side on one disk in one run (issue 33 asks for RocksDB to
 * be measured before the embedded store's engine is chosen). Not part of the build: a single-file
 * program, run with RocksDB's jar on the class path:
 *
 * <pre>
 * mvn -B -q dependency:get -Dartifact=org.rocksdb:rocksdbjni:10.10.1.1:jar:linux64
 * java -cp ~/.m2/repository/org/rocksdb/rocksdbjni/10.10.1.1/rocksdbjni-10.10.1.1-linux64.jar \
 *   once-bench/gateway/RocksFloor.java DIR [SECONDS_PER_SIZE]
 * </pre>
 *
 * <p>What a store on RocksDB would have to write, with nothing of the gateway around it: a claim
 * reads the key (it must be absent) and writes, in one atomic batch, the record and the two index
 * entries the SQLite schema keeps (by expiry, for the purge; in flight, for the operator's
 * listing); a finish reads the record and writes it back with its result, dropping the in-flight
 * entry. Every batch is written with {@code sync=true}, the durability of {@code --durability
 * power-loss}. Keys are committed one at a time, then 8 and 50 to a batch, as sqlite_floor.py does.
 * Each configuration runs SECONDS_PER_SIZE seconds (default 3) on a new database. Prints, per
 * configuration, keys/s at 1, 8 and 50, and the one-at-a-time pair's p50 and p99.
 */
public final class RocksFloor {
  private static final byte[] RESULT =
      "{\"status\":201,\"body\":\"{\\\"id\\\":\\\"pay_1\\\"}\"}".getBytes(StandardCharsets.UTF_8);
  private static final long LEASE_MICROS = 30_000_000L;
  private static final long RETENTION_MICROS = 86_400_000_000L;

  private RocksFloor() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: RocksFloor DIR [SECONDS_PER_SIZE]");
      System.exit(2);
    }
    Path dir = Path.of(args[0]);
    double seconds = args.length > 1 ? Double.parseDouble(args[1]) : 3.0;
    Files.createDirectories(dir);
    RocksDB.loadLibrary();
    // Recycled WAL files are overwritten rather than grown, which spares a sync the file's size:
    // measured too, as it is the one WAL option that bears on a sync's cost.
    for (boolean recycled : new boolean[] {false, true}) {
      StringBuilder line = new StringBuilder(recycled ? "rocks-recycled-wal" : "rocks");
      List<Long> pairs = new ArrayList<>();
      for (int batch : new int[] {1, 8, 50}) {
        double rate = run(dir, batch, seconds, recycled, batch == 1 ? pairs : new ArrayList<>());
        line.append('\t').append(Math.round(rate));
      }
      Collections.sort(pairs);
      line.append(String.format(
          "\tone at a time: p50 %d us, p99 %d us",
          pairs.get(pairs.size() / 2) / 1000, pairs.get((int) (pairs.size() * 0.99)) / 1000));
      System.out.println(line);
    }
  }

  private static double run(Path dir, int batch, double seconds, boolean recycled, List<Long> pairs)
      throws RocksDBException, IOException {
    Path path = dir.resolve("rocks-" + batch + (recycled ? "-recycled" : ""));
    deleteTree(path);
    try (Options options = new Options().setCreateIfMissing(true);
        WriteOptions durable = new WriteOptions().setSync(true)) {
      if (recycled) {
        options.setRecycleLogFileNum(4);
      }
      try (RocksDB db = RocksDB.open(options, path.toString())) {
        long keys = 0;
        long start = System.nanoTime();
        long deadline = start + (long) (seconds * 1e9);
        while (System.nanoTime() < deadline) {
          long began = System.nanoTime();
          long now = System.currentTimeMillis() * 1000;
          try (WriteBatch claims = new WriteBatch()) {
            for (long k = keys; k < keys + batch; k++) {
              byte[] key = bytes("r/s/k" + k);
              if (db.get(key) != null) {
                throw new IllegalStateException("a new key was present: k" + k);
              }
              claims.put(key, record("IN_PROGRESS", k, now, null));
              claims.put(bytes("x/" + (now + RETENTION_MICROS) + "/k" + k), new byte[0]);
              claims.put(bytes("f/" + now + "/k" + k), new byte[0]);
            }
            db.write(durable, claims);
          }
          try (WriteBatch finishes = new WriteBatch()) {
            for (long k = keys; k < keys + batch; k++) {
              byte[] key = bytes("r/s/k" + k);
              if (db.get(key) == null) {
                throw new IllegalStateException("a claimed key was absent: k" + k);
              }
              finishes.put(key, record("COMPLETED", k, now, RESULT));
              finishes.delete(bytes("f/" + now + "/k" + k));
            }
            db.write(durable, finishes);
          }
          pairs.add(System.nanoTime() - began);
          keys += batch;
        }
        return keys / ((System.nanoTime() - start) / 1e9);
      }
    } finally {
      deleteTree(path);
    }
  }

  /** The SQLite row's columns, flat: what a record on RocksDB would carry. */
  private static byte[] record(String state, long token, long now, byte[] result) {
    int resultLength = result == null ? 0 : result.length;
    ByteBuffer buffer = ByteBuffer.allocate(64 + resultLength);
    buffer.put(bytes(state)).put((byte) 0).put(bytes("f")).put((byte) 0);
    buffer.putLong(token).putInt(1).putLong(now + LEASE_MICROS).putLong(now + RETENTION_MICROS);
    buffer.putLong(now);
    if (result != null) {
      buffer.put(result);
    }
    byte[] record = new byte[buffer.position()];
    buffer.flip().get(record);
    return record;
  }

  private static byte[] bytes(String text) {
    return text.getBytes(StandardCharsets.UTF_8);
  }

  private static void deleteTree(Path path) throws IOException {
    if (!Files.exists(path)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(path)) {
      for (Path p : walk.sorted(Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }
}
