package dev.once.store.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.once.store.ClaimResult;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.store.StoreFullException;
import dev.once.store.StoreUnavailableException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.sqlite.SQLiteCommitListener;
import org.sqlite.SQLiteConnection;

class EmbeddedStoreTest extends JdbcStoreBehaviour {

  /** The executor of a caller whose answers must all go on on the writer instead. */
  private static final Executor NOT_THE_CALLERS =
      task -> {
        throw new AssertionError("the caller's executor was used");
      };

  @TempDir Path dir;

  @Override
  IdempotencyStore openStoreOnEmptyTable() {
    return EmbeddedStore.builder(dir).tableName("once_test_embedded").build();
  }

  @Test
  void recordsSurviveClosingAndReopening() {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    store.complete(id, c.token(), new byte[] {42}, TTL);
    store.close();
    store = EmbeddedStore.builder(dir).tableName("once_test_embedded").build();
    assertThat(store.get(id)).get().satisfies(r -> assertThat(r.result()).containsExactly(42));
  }

  @Test
  void tokensKeepGrowingAcrossReopeningEvenPastAReservedBlock() {
    RecordId id = newId();
    long last = 0;
    for (int i = 0; i < 3; i++) {
      ClaimResult.Claimed c = claim(id, LEASE);
      assertThat(c.token()).isGreaterThan(last);
      last = c.token();
      store.release(id, c.token());
      store.close();
      store = EmbeddedStore.builder(dir).tableName("once_test_embedded").build();
    }
    for (int i = 0; i < SqliteDialect.TOKEN_BLOCK + 5; i++) {
      ClaimResult.Claimed c = claim(id, LEASE);
      assertThat(c.token()).isGreaterThan(last);
      last = c.token();
      store.release(id, c.token());
    }
  }

  @Test
  void aSecondProcessCannotOpenTheSameFile() {
    claim(newId(), LEASE);
    try (EmbeddedStore second =
        EmbeddedStore.builder(dir).tableName("once_test_embedded").build()) {
      assertThatThrownBy(() -> second.claim(request(newId(), LEASE)))
          .isInstanceOf(StoreUnavailableException.class);
    } catch (StoreUnavailableException expected) {
      // Refused at open: just as good.
    }
  }

  @Test
  void aWaiterIsWokenInProcessWhenTheRecordCompletes() throws Exception {
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    assertThat(store.notifiesChanges()).isTrue();
    CompletableFuture<Void> change = store.awaitChange(id);
    assertThat(change).isNotDone();
    store.complete(id, c.token(), new byte[] {1}, TTL);
    change.get(1, TimeUnit.SECONDS);
  }

  /**
   * A statement inside a transaction that changes pages the transaction changed before keeps their
   * earlier content in a statement journal, to undo itself alone. Here it keeps about 200 KiB, over
   * SQLite's 64 KiB spill threshold: with temporary files on disk the journal would become a file
   * in the system's temporary directory, which the store's exclusive connection keeps open and
   * writes every later statement's journal to. It stays in memory: the process holds no such file.
   */
  @Test
  void aStatementJournalStaysInMemoryEvenPastSQLitesSpillThreshold() throws Exception {
    Path descriptors = Path.of("/proc/self/fd");
    assumeTrue(Files.isDirectory(descriptors), "lists the process's open files");
    // Files SQLite connections of other tests in this JVM may hold are not this store's.
    Set<String> before = sqliteTemporaryFiles(descriptors);
    ((JdbcStore) store)
        .connections.run(
            session -> {
              try (Statement s = session.connection().createStatement()) {
                s.execute(
                    "CREATE TABLE journal_probe (n INTEGER PRIMARY KEY,"
                        + " pad TEXT NOT NULL CHECK (length(pad) > 0))");
                s.execute(
                    "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r WHERE n < 200)"
                        + " INSERT INTO journal_probe SELECT n, printf('%.1000c', 'a') FROM r");
                // Every page the insert changed, changed again by one statement that may abort.
                assertThat(s.executeUpdate("UPDATE journal_probe SET pad = pad || 'b'"))
                    .isEqualTo(200);
                s.execute("DROP TABLE journal_probe");
              }
              return null;
            },
            1);

    assertThat(sqliteTemporaryFiles(descriptors)).isSubsetOf(before);
  }

  /** What the process's open descriptors point to that SQLite named as its temporary files. */
  private static Set<String> sqliteTemporaryFiles(Path descriptors) throws IOException {
    Set<String> files = new HashSet<>();
    try (var open = Files.list(descriptors)) {
      for (Path fd : (Iterable<Path>) open::iterator) {
        try {
          String target = Files.readSymbolicLink(fd).toString();
          if (target.contains("etilqs_")) {
            files.add(target);
          }
        } catch (IOException closedMeanwhile) {
          // a descriptor closed since it was listed (the listing's own among them)
        }
      }
    }
    return files;
  }

  /**
   * A full disk (here SQLite's page limit) makes SQLite roll back the whole open transaction, and
   * with it the writes of every operation in the group commit. Those operations must fail, none
   * that succeeded may be lost, and once there is room again the store works without a restart.
   */
  @Test
  void aFullDiskFailsEveryOperationOfItsBatchAndTheStoreRecoversOnceThereIsRoomAgain()
      throws Exception {
    byte[] body = new byte[32 * 1024];
    long pages = pragma("PRAGMA page_count");
    pragma("PRAGMA max_page_count = " + (pages + 40));
    Map<RecordId, Boolean> completed = new ConcurrentHashMap<>();
    List<Exception> failures = Collections.synchronizedList(new ArrayList<>());
    ExecutorService writers = Executors.newFixedThreadPool(4);
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Future<?>> done = new ArrayList<>();
      for (int w = 0; w < 4; w++) {
        done.add(
            writers.submit(
                () -> {
                  start.await();
                  for (int i = 0; i < 40 && failures.size() < 12; i++) {
                    RecordId id = newId();
                    try {
                      ClaimResult.Claimed c = claim(id, LEASE);
                      completed.put(id, false);
                      assertThat(store.complete(id, c.token(), body, TTL)).isTrue();
                      completed.put(id, true);
                    } catch (StoreUnavailableException e) {
                      failures.add(e);
                    }
                  }
                  return null;
                }));
      }
      start.countDown();
      for (Future<?> f : done) {
        f.get(60, TimeUnit.SECONDS);
      }
    } finally {
      writers.shutdownNow();
    }
    assertThat(failures)
        .as("failures while the disk is full")
        .isNotEmpty()
        .anySatisfy(e -> assertThat(e).isInstanceOf(StoreFullException.class));
    assertThat(completed).containsValue(true);

    pragma("PRAGMA max_page_count = 1000000");
    RecordId after = newId();
    ClaimResult.Claimed c = claim(after, LEASE);
    assertThat(store.complete(after, c.token(), body, TTL))
        .as("a write once there is room")
        .isTrue();
    completed.put(after, true);

    store.close();
    store = EmbeddedStore.builder(dir).tableName("once_test_embedded").build();
    completed.forEach(
        (id, complete) -> {
          if (complete) {
            assertThat(store.get(id))
                .as("%s, confirmed completed", id)
                .get()
                .satisfies(r -> assertThat(r.result()).isEqualTo(body));
          } else {
            store
                .get(id)
                .ifPresent(
                    r ->
                        assertThat(r.state())
                            .as("%s, whose completion failed", id)
                            .isEqualTo(RecordState.IN_PROGRESS));
          }
        });
  }

  /** Runs a pragma on the store's own connection and returns its first value, if any. */
  private long pragma(String sql) throws SQLException {
    return ((JdbcStore) store)
        .connections.run(
            session -> {
              try (Statement s = session.connection().createStatement()) {
                if (!s.execute(sql)) {
                  return 0L;
                }
                try (ResultSet rs = s.getResultSet()) {
                  return rs.next() ? rs.getLong(1) : 0L;
                }
              }
            },
            1);
  }

  @Test
  void aStatementRunningPastTheQueryTimeoutIsInterruptedAndTheStoreGoesOn() throws Exception {
    // Not closed if the statement is never interrupted: the runaway statement would hold the
    // connection, and close() with it.
    EmbeddedStore bounded =
        EmbeddedStore.builder(dir.resolve("bounded")).queryTimeout(Duration.ofSeconds(1)).build();
    Connections connections = bounded.connections;
    long start = System.nanoTime();
    assertTimeoutPreemptively(
        Duration.ofSeconds(20),
        () ->
            assertThatThrownBy(
                    () ->
                        connections.run(
                            session -> {
                              try (Statement s = session.connection().createStatement()) {
                                return s.executeQuery(
                                    "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT count(*) FROM n");
                              }
                            },
                            1))
                .isInstanceOf(SQLException.class)
                .hasMessageContaining("interrupt"));
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
    RecordId id = newId();
    ClaimResult.Claimed c = (ClaimResult.Claimed) bounded.claim(request(id, LEASE));
    assertThat(bounded.complete(id, c.token(), new byte[] {1}, TTL)).isTrue();
    bounded.close();
  }

  /**
   * The writer thread is busy with one operation for longer than the timeout: a claim still queued
   * behind it, blocking or asynchronous, is taken back and refused, and never runs later.
   */
  @Test
  void anOperationTheWriterCannotTakeInTimeIsTakenBackAndNeverRuns() throws Exception {
    EmbeddedStore bounded =
        EmbeddedStore.builder(dir.resolve("busy")).queryTimeout(Duration.ofSeconds(1)).build();
    try {
      CountDownLatch release = new CountDownLatch(1);
      CompletableFuture<Boolean> hold = holdWriter(bounded, release);
      RecordId id = newId();
      RecordId asyncId = newId();
      CompletableFuture<ClaimResult> async =
          bounded.claimAsync(request(asyncId, LEASE), Runnable::run).toCompletableFuture();
      assertThatThrownBy(() -> bounded.claim(request(id, LEASE)))
          .isInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining("busy");
      assertThatThrownBy(() -> async.get(5, TimeUnit.SECONDS))
          .as("the asynchronous claim, with no thread of the caller's waiting to bound it")
          .hasCauseInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining("busy");
      release.countDown();
      assertThat(hold.get(10, TimeUnit.SECONDS)).isTrue();
      assertThat(bounded.get(id)).as("the claim taken back").isEmpty();
      assertThat(bounded.get(asyncId)).as("the asynchronous claim taken back").isEmpty();
    } finally {
      bounded.close();
    }
  }

  /** An operation that throws an Error fails alone; the writer thread goes on with the next. */
  @Test
  void anErrorInOneOperationLeavesTheWriterServingTheNext() {
    Connections connections = ((JdbcStore) store).connections;
    assertThatThrownBy(
            () ->
                connections.run(
                    session -> {
                      throw new StackOverflowError("an operation's defect");
                    },
                    1))
        .isInstanceOf(StackOverflowError.class);
    RecordId id = newId();
    ClaimResult.Claimed c = claim(id, LEASE);
    assertThat(store.complete(id, c.token(), new byte[] {1}, TTL)).isTrue();
  }

  /**
   * The driver throws an Error out of a commit that did reach the file (here SQLite's commit hook,
   * called inside the commit, throws; an out-of-memory in the driver's native call looks the same).
   * The batch's callers learn that the outcome is unknown, never that their claim did not happen,
   * and the writer thread lives on to serve the next operation.
   */
  @Test
  void anErrorThrownByACommitLeavesItsOutcomeUnknownAndTheWriterServingTheNext() throws Exception {
    EmbeddedStore bounded =
        EmbeddedStore.builder(dir.resolve("commit-error"))
            .queryTimeout(Duration.ofSeconds(1))
            .build();
    try {
      AtomicBoolean armed = new AtomicBoolean();
      bounded.connections.run(
          session -> {
            session
                .connection()
                .unwrap(SQLiteConnection.class)
                .addCommitListener(
                    new SQLiteCommitListener() {
                      @Override
                      public void onCommit() {
                        if (armed.getAndSet(false)) {
                          throw new OutOfMemoryError("thrown inside the commit");
                        }
                      }

                      @Override
                      public void onRollback() {}
                    });
            return Boolean.TRUE;
          },
          1);
      armed.set(true);
      RecordId id = newId();
      assertTimeoutPreemptively(
          Duration.ofSeconds(10),
          () ->
              assertThatThrownBy(() -> bounded.claim(request(id, LEASE)))
                  .isInstanceOf(StoreUnavailableException.class)
                  .hasMessageContaining("unknown")
                  .hasRootCauseInstanceOf(OutOfMemoryError.class));
      assertThat(armed).as("the commit hook ran").isFalse();
      RecordId next = newId();
      ClaimResult.Claimed c =
          assertTimeoutPreemptively(
              Duration.ofSeconds(10),
              () -> (ClaimResult.Claimed) bounded.claim(request(next, LEASE)));
      assertThat(bounded.complete(next, c.token(), new byte[] {1}, TTL)).isTrue();
      assertThat(bounded.get(id))
          .as("the claim whose commit threw reached the file: 'did not happen' would be a lie")
          .get()
          .satisfies(r -> assertThat(r.state()).isEqualTo(RecordState.IN_PROGRESS));
    } finally {
      bounded.close();
    }
  }

  /**
   * A batch's commit is durable, and then the next transaction cannot begin (the connection was
   * made read-only inside the batch). The batch's callers are told their writes happened, for they
   * did; only the operations after it fail.
   */
  @Test
  void aBeginThatFailsAfterADurableCommitIsNotReportedAsAFailedCommit() throws Exception {
    Path at = dir.resolve("begin-fails");
    EmbeddedStore bounded = EmbeddedStore.builder(at).queryTimeout(Duration.ofSeconds(1)).build();
    RecordId id = newId();
    try {
      CountDownLatch release = new CountDownLatch(1);
      CompletableFuture<Boolean> hold = holdWriter(bounded, release);
      // Both queued behind the held writer, so they run in one batch, the claim first.
      CompletableFuture<ClaimResult> claimed =
          bounded.claimAsync(request(id, LEASE), Runnable::run).toCompletableFuture();
      CompletableFuture<Boolean> readOnly =
          ((EmbeddedConnection) bounded.connections)
              .submit(
                  session -> {
                    try (Statement s = session.connection().createStatement()) {
                      s.execute("PRAGMA query_only = 1");
                    }
                    return Boolean.TRUE;
                  });
      release.countDown();
      assertThat(hold.get(10, TimeUnit.SECONDS)).isTrue();
      assertThat(readOnly.get(10, TimeUnit.SECONDS)).isTrue();
      assertThat(claimed.get(10, TimeUnit.SECONDS))
          .as("the claim of the batch that committed")
          .isInstanceOf(ClaimResult.Claimed.class);
      assertThatThrownBy(() -> bounded.claim(request(newId(), LEASE)))
          .as("an operation once no transaction can begin")
          .isInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining("cannot begin");
    } finally {
      bounded.close();
    }
    EmbeddedStore reopened = EmbeddedStore.builder(at).build();
    try {
      assertThat(reopened.get(id))
          .as("the claim reported as made")
          .get()
          .satisfies(r -> assertThat(r.state()).isEqualTo(RecordState.IN_PROGRESS));
    } finally {
      reopened.close();
    }
  }

  /**
   * An asynchronous call's answer goes on on the caller's executor, never on the writer thread: a
   * blocking store call made from it (a listener's, a codec's) would otherwise wait for itself.
   */
  @Test
  void whatFollowsAnAsynchronousCallRunsOnTheCallersExecutorSoItMayCallTheStoreAgain()
      throws Exception {
    ExecutorService callers = Executors.newSingleThreadExecutor(r -> new Thread(r, "caller"));
    try {
      // The writer is held until the claim's continuation is in place, so that the continuation
      // runs where the answer is delivered, not on this thread.
      CountDownLatch chained = new CountDownLatch(1);
      CompletableFuture<Boolean> hold = holdWriter((JdbcStore) store, chained);
      RecordId id = newId();
      String[] thread = new String[1];
      CompletableFuture<Boolean> completed =
          store
              .claimAsync(request(id, LEASE), callers)
              .thenApply(
                  claim -> {
                    thread[0] = Thread.currentThread().getName();
                    return store.complete(
                        id, ((ClaimResult.Claimed) claim).token(), new byte[] {1}, TTL);
                  })
              .toCompletableFuture();
      chained.countDown();
      assertThat(hold.get(10, TimeUnit.SECONDS)).isTrue();
      assertThat(completed.get(20, TimeUnit.SECONDS)).isTrue();
      assertThat(thread[0]).isEqualTo("caller");
    } finally {
      callers.shutdownNow();
    }
  }

  /**
   * Built to answer on its writer, the store runs what follows an asynchronous call there, with no
   * thread of the caller's executor woken for it; a blocking call of the store made from there
   * fails at once, as a programming error, instead of waiting for the thread it runs on until the
   * timeout failed it and every other caller with it; and the writer goes on serving.
   */
  @Test
  void builtToAnswerOnItsWriterAStoreRunsTheContinuationThereAndRefusesABlockingCallFromIt()
      throws Exception {
    // A blocking call that waited for its own thread would fail only after the 30 s timeout,
    // which the 20 s this test waits for the refusal below is shorter than.
    EmbeddedStore onWriter = answeringOnWriter("on-writer", Duration.ofSeconds(30));
    try {
      RecordId id = newId();
      String[] thread = new String[1];
      long[] token = new long[1];
      CompletableFuture<Object> again =
          claimThenOnTheWriter(
              onWriter,
              id,
              claim -> {
                thread[0] = Thread.currentThread().getName();
                token[0] = ((ClaimResult.Claimed) claim).token();
                return onWriter.complete(id, token[0], new byte[] {1}, TTL);
              });
      assertThatThrownBy(() -> again.get(20, TimeUnit.SECONDS))
          .hasCauseInstanceOf(IllegalStateException.class)
          .hasMessageContaining("writer thread");
      assertThat(thread[0]).isEqualTo("once-embedded-store-writer");
      // The writer goes on: the lease the refused call held is finished asynchronously, and a new
      // key is claimed blocking.
      assertThat(
              onWriter
                  .completeAsync(id, token[0], new byte[] {2}, TTL, NOT_THE_CALLERS)
                  .toCompletableFuture()
                  .get(20, TimeUnit.SECONDS))
          .isTrue();
      assertThat(onWriter.claim(request(newId(), LEASE))).isInstanceOf(ClaimResult.Claimed.class);
    } finally {
      onWriter.close();
    }
  }

  /**
   * Built to answer on its writer, the store survives a continuation that throws an {@link Error}
   * there: the caller's stage fails with it, and the writer goes on committing.
   */
  @Test
  void builtToAnswerOnItsWriterAStoreOutlivesAContinuationThatThrowsAnError() throws Exception {
    EmbeddedStore onWriter = answeringOnWriter("on-writer-error", Duration.ofSeconds(5));
    try {
      RecordId id = newId();
      String[] thread = new String[1];
      CompletableFuture<Object> failed =
          claimThenOnTheWriter(
              onWriter,
              id,
              claim -> {
                thread[0] = Thread.currentThread().getName();
                throw new OutOfMemoryError("a continuation's defect");
              });
      assertThatThrownBy(() -> failed.get(20, TimeUnit.SECONDS))
          .hasCauseInstanceOf(OutOfMemoryError.class);
      assertThat(thread[0]).isEqualTo("once-embedded-store-writer");
      // The claim was committed before its continuation failed; the writer serves the next call.
      assertThat(onWriter.get(id))
          .hasValueSatisfying(r -> assertThat(r.state()).isEqualTo(RecordState.IN_PROGRESS));
      assertThat(onWriter.claim(request(newId(), LEASE))).isInstanceOf(ClaimResult.Claimed.class);
    } finally {
      onWriter.close();
    }
  }

  /**
   * Claims {@code id} asynchronously on a store built to answer on its writer and chains {@code
   * then}, holding the writer until it is chained, so that it runs on the writer and not on this
   * thread, as it would had the claim been answered first.
   */
  private CompletableFuture<Object> claimThenOnTheWriter(
      EmbeddedStore store, RecordId id, Function<ClaimResult, Object> then) throws Exception {
    CountDownLatch chained = new CountDownLatch(1);
    CompletableFuture<Boolean> hold = holdWriter(store, chained);
    CompletableFuture<Object> answered =
        store.claimAsync(request(id, LEASE), NOT_THE_CALLERS).thenApply(then).toCompletableFuture();
    chained.countDown();
    assertThat(hold.get(10, TimeUnit.SECONDS)).as("the writer was held, then let go").isTrue();
    return answered;
  }

  private EmbeddedStore answeringOnWriter(String subdirectory, Duration queryTimeout) {
    return EmbeddedStore.builder(dir.resolve(subdirectory))
        .queryTimeout(queryTimeout)
        .answersOnWriter(true)
        .build();
  }

  /**
   * A replay of a finished record is answered from memory while the writer is busy, and a kept
   * record stops answering once it expires: the next claim of its key is a fresh one.
   */
  @Test
  void aFinishedRecordIsReplayedWithoutTheWriterUntilItExpires() throws Exception {
    // The store's own clock, moved by the test: a slow machine cannot expire the record early.
    dev.once.tck.FakeClock clock = dev.once.tck.FakeClock.create();
    EmbeddedStore timed = EmbeddedStore.builder(dir.resolve("timed")).clock(clock).build();
    try {
      RecordId id = newId();
      ClaimResult.Claimed first = (ClaimResult.Claimed) timed.claim(request(id, LEASE));
      Duration ttl = Duration.ofMinutes(1);
      assertThat(timed.complete(id, first.token(), new byte[] {7}, ttl)).isTrue();
      assertThat(timed.claim(request(id, LEASE))).isInstanceOf(ClaimResult.Existing.class);

      CountDownLatch replayed = new CountDownLatch(1);
      CompletableFuture<Boolean> hold = holdWriter(timed, replayed);
      assertThat(timed.claim(request(id, LEASE)))
          .as("a replay while the writer is held")
          .isInstanceOfSatisfying(
              ClaimResult.Existing.class, e -> assertThat(e.record().result()).containsExactly(7));
      assertThat(timed.get(id)).get().extracting(r -> r.state()).isEqualTo(RecordState.COMPLETED);
      replayed.countDown();
      assertThat(hold.get(10, TimeUnit.SECONDS)).as("the writer was still held").isTrue();

      clock.advance(ttl);
      assertThat(timed.get(id)).as("expired").isEmpty();
      ClaimResult.Claimed again = (ClaimResult.Claimed) timed.claim(request(id, LEASE));
      assertThat(again.token()).isGreaterThan(first.token());
    } finally {
      timed.close();
    }
  }

  /** The finished records kept in memory stay within their bound, whatever is read. */
  @Test
  void theFinishedRecordsKeptInMemoryStayWithinTheirBound() {
    FinishedRecords kept = new FinishedRecords(java.time.Clock.systemUTC(), 64 * 1024);
    List<RecordId> ids = new ArrayList<>();
    for (int i = 0; i < 200; i++) {
      RecordId id = newId();
      ids.add(id);
      java.time.Instant now = java.time.Instant.now();
      kept.keep(
          new ClaimResult.Existing(
              new dev.once.store.IdempotencyRecord(
                  id,
                  RecordState.COMPLETED,
                  FP,
                  i,
                  now,
                  now.plus(TTL),
                  null,
                  new byte[1024],
                  now,
                  now)));
    }
    long answered = ids.stream().filter(id -> kept.get(id) != null).count();
    assertThat(answered).isPositive().isLessThanOrEqualTo(64 * 1024 / (1024 + 256));
  }

  /**
   * Holds {@code store}'s writer thread with an operation of the test's own until {@code release}
   * counts down (at most 5 s; Java work, which SQLite's progress handler cannot interrupt); returns
   * once the writer holds it. The future answers whether it was released in time.
   */
  private static CompletableFuture<Boolean> holdWriter(JdbcStore store, CountDownLatch release)
      throws InterruptedException {
    CountDownLatch holding = new CountDownLatch(1);
    CompletableFuture<Boolean> hold =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                return store.connections.run(
                    session -> {
                      holding.countDown();
                      try {
                        return release.await(5, TimeUnit.SECONDS);
                      } catch (InterruptedException e) {
                        throw new SQLException(e);
                      }
                    },
                    1);
              } catch (SQLException e) {
                throw new IllegalStateException(e);
              }
            });
    assertThat(holding.await(5, TimeUnit.SECONDS)).as("the writer is held").isTrue();
    return hold;
  }

  @Test
  void operationsOnAClosedStoreAreRefused() {
    RecordId finished = newId();
    ClaimResult.Claimed c = claim(finished, LEASE);
    assertThat(store.complete(finished, c.token(), new byte[] {1}, TTL)).isTrue();
    assertThat(store.get(finished)).as("read once, so kept in memory").isPresent();
    store.close();
    assertThatThrownBy(() -> store.get(newId())).isInstanceOf(StoreUnavailableException.class);
    assertThatThrownBy(() -> store.get(finished))
        .as("a replay the store kept in memory")
        .isInstanceOf(StoreUnavailableException.class);
    assertThatThrownBy(() -> store.claim(request(finished, LEASE)))
        .isInstanceOf(StoreUnavailableException.class);
  }

  /**
   * An executor that refuses what follows a call's answer leaves the call's outcome unknown: the
   * caller learns it as the store being unavailable, never on the writer's thread.
   */
  @Test
  void anExecutorThatRefusesTheAnswerLeavesTheStoreUnavailableOffTheWritersThread()
      throws Exception {
    String[] thread = new String[1];
    CompletableFuture<String> failed =
        store
            .claimAsync(
                request(newId(), LEASE),
                r -> {
                  throw new java.util.concurrent.RejectedExecutionException("full");
                })
            .handle(
                (claim, failure) -> {
                  thread[0] = Thread.currentThread().getName();
                  Throwable cause =
                      failure instanceof java.util.concurrent.CompletionException
                          ? failure.getCause()
                          : failure;
                  return cause == null ? "answered" : cause.getClass().getSimpleName();
                })
            .toCompletableFuture();
    assertThat(failed.get(10, TimeUnit.SECONDS)).isEqualTo("StoreUnavailableException");
    assertThat(thread[0]).isNotEqualTo("once-embedded-store-writer");
    // The writer still serves the next call.
    claim(newId(), LEASE);
  }
}
