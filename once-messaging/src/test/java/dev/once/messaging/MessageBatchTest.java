package dev.once.messaging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.once.Admission;
import dev.once.FinalFailure;
import dev.once.Fingerprint;
import dev.once.IdempotencyKey;
import dev.once.Lease;
import dev.once.Once;
import dev.once.Scope;
import dev.once.fingerprint.Fingerprinter;
import dev.once.messaging.Acknowledgement.Ack;
import dev.once.messaging.Acknowledgement.AckReason;
import dev.once.messaging.Acknowledgement.DeadLetter;
import dev.once.messaging.Acknowledgement.Redeliver;
import dev.once.messaging.Acknowledgement.RedeliverReason;
import dev.once.store.ClaimRequest;
import dev.once.store.ClaimResult;
import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyRecord;
import dev.once.store.IdempotencyStore;
import dev.once.store.InMemoryStore;
import dev.once.store.RecordId;
import dev.once.store.RecordState;
import dev.once.tck.FakeClock;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** A partition's poll through {@link MessageIdempotency#processAll}: claimed together, in order. */
@Timeout(30)
class MessageBatchTest {

  private static final Scope SCOPE = Scope.of("billing", "orders");
  private static final Ack PROCESSED = new Ack(AckReason.PROCESSED);
  private static final Ack DUPLICATE = new Ack(AckReason.DUPLICATE);

  /** The in-memory store, counting claim calls; a completion of the key {@code lost} is refused. */
  static final class CountingStore extends ForwardingStore {
    final InMemoryStore memory = InMemoryStore.create();
    final AtomicInteger claimCalls = new AtomicInteger();
    final AtomicInteger claimAllCalls = new AtomicInteger();

    @Override
    protected IdempotencyStore delegate() {
      return memory;
    }

    @Override
    public ClaimResult claim(ClaimRequest request) {
      claimCalls.incrementAndGet();
      return super.claim(request);
    }

    @Override
    public List<ClaimResult> claimAll(List<ClaimRequest> requests) {
      claimAllCalls.incrementAndGet();
      return super.claimAll(requests);
    }

    @Override
    public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
      return !id.key().value().startsWith("lost-") && super.complete(id, token, result, ttl);
    }
  }

  private final CountingStore store = new CountingStore();
  private final Once once = Once.of(store);
  private final List<String> ran = new ArrayList<>();
  private final MessageHandler<TestMessage> record = (m, ctx) -> ran.add(key(m));

  @AfterEach
  void close() {
    once.close();
  }

  private MessageIdempotency<TestMessage> messages() {
    return MessageIdempotency.builder(once, TestMessage.READER).scope(SCOPE).build();
  }

  private static String key(TestMessage m) {
    return m.headers().get(KeyExtractor.DEFAULT_HEADER);
  }

  private static List<TestMessage> keyed(String... keys) {
    List<TestMessage> list = new ArrayList<>();
    for (String k : keys) {
      list.add(TestMessage.keyed(k, "{}"));
    }
    return list;
  }

  private static String[] fresh(String prefix, int n) {
    String run = UUID.randomUUID().toString().substring(0, 8);
    String[] keys = new String[n];
    for (int i = 0; i < n; i++) {
      keys[i] = prefix + run + "-" + i;
    }
    return keys;
  }

  private RecordState stateOf(String key) {
    return store
        .memory
        .get(RecordId.of(SCOPE, IdempotencyKey.of(key)))
        .map(r -> r.state())
        .orElse(null);
  }

  @Test
  void aPollsRecordsAreClaimedInOneCallAndEachIsProcessedInOrder() {
    String[] keys = fresh("k", 5);

    List<Acknowledgement> acks = messages().processAll(keyed(keys), record);

    assertThat(acks).containsExactly(PROCESSED, PROCESSED, PROCESSED, PROCESSED, PROCESSED);
    assertThat(ran).containsExactly(keys);
    assertThat(store.claimAllCalls).hasValue(1);
    assertThat(store.claimCalls).hasValue(5); // the default claimAll claims one by one
    for (String k : keys) {
      assertThat(stateOf(k)).isEqualTo(RecordState.COMPLETED);
    }
    // Redelivered, the whole poll is answered as duplicates without running.
    assertThat(messages().processAll(keyed(keys), record)).containsOnly(DUPLICATE).hasSize(5);
    assertThat(ran).hasSize(5);
  }

  @Test
  void aKeyTwiceInOnePollIsAnsweredByItsFirstOutcome() {
    String[] k = fresh("d", 2);

    List<Acknowledgement> acks = messages().processAll(keyed(k[0], k[1], k[0]), record);

    assertThat(acks).containsExactly(PROCESSED, PROCESSED, DUPLICATE);
    assertThat(ran).containsExactly(k[0], k[1]);
    assertThat(store.claimAllCalls).hasValue(2);
  }

  @Test
  void aRedeliveryStopsThePollAndTheClaimsAfterItAreReleased() {
    String[] k = fresh("r", 5);
    Admission held =
        once.begin(
            SCOPE,
            IdempotencyKey.of(k[2]),
            Fingerprinter.defaults().raw(TestMessage.keyed(k[2], "{}").payload(), "message"),
            once.defaults());
    assertThat(held).isInstanceOf(Admission.Proceed.class);

    List<Acknowledgement> acks = messages().processAll(keyed(k), record);

    assertThat(acks).hasSize(3);
    assertThat(acks.subList(0, 2)).containsOnly(PROCESSED);
    assertThat(acks.get(2)).isInstanceOf(Redeliver.class);
    assertThat(((Redeliver) acks.get(2)).reason()).isEqualTo(RedeliverReason.IN_FLIGHT);
    assertThat(ran).containsExactly(k[0], k[1]);
    // Nothing ran under the claims of the last two: they were released, not left in flight.
    assertThat(stateOf(k[3])).isNull();
    assertThat(stateOf(k[4])).isNull();
    ((Admission.Proceed) held).lease().release();
  }

  /**
   * As above, with one of the claims not run a steal of a lease whose holder saved a recovery point
   * and died: that claim is handed over, not released (its lease ended, the record kept), so the
   * record and its recovery point reach the next claim at once, as they would have had the poll
   * never claimed it.
   */
  @Test
  void aStolenClaimThatAStoppedPollDidNotRunKeepsItsRecoveryPoint() {
    FakeClock clock = FakeClock.create();
    InMemoryStore timed = InMemoryStore.builder().clock(clock).build();
    String[] k = fresh("s", 4);
    try (Once engine = Once.of(timed)) {
      Lease gone = lease(engine.begin(SCOPE, key(k[2]), fingerprint(k[2]), engine.defaults()));
      gone.checkpoint("charged".getBytes(StandardCharsets.UTF_8));
      gone.abandon();
      clock.advance(engine.defaults().lease().plusSeconds(1));
      Lease held = lease(engine.begin(SCOPE, key(k[1]), fingerprint(k[1]), engine.defaults()));

      List<Acknowledgement> acks =
          MessageIdempotency.builder(engine, TestMessage.READER)
              .scope(SCOPE)
              .build()
              .processAll(keyed(k), record);

      assertThat(acks).hasSize(2);
      assertThat(acks.get(1)).isInstanceOf(Redeliver.class);
      assertThat(ran).containsExactly(k[0]);
      assertThat(timed.get(RecordId.of(SCOPE, key(k[3])))).as("fresh, released").isEmpty();
      IdempotencyRecord stolen = timed.get(RecordId.of(SCOPE, key(k[2]))).orElseThrow();
      assertThat(stolen.state()).isEqualTo(RecordState.IN_PROGRESS);
      assertThat(stolen.token()).isGreaterThan(gone.token());
      Lease next = lease(engine.begin(SCOPE, key(k[2]), fingerprint(k[2]), engine.defaults()));
      assertThat(next.stolen()).isTrue();
      assertThat(next.recoveryPoint()).hasValue("charged".getBytes(StandardCharsets.UTF_8));
      next.release();
      held.release();
    }
  }

  private static IdempotencyKey key(String k) {
    return IdempotencyKey.of(k);
  }

  private static Fingerprint fingerprint(String k) {
    return Fingerprinter.defaults().raw(TestMessage.keyed(k, "{}").payload(), "message");
  }

  private static Lease lease(Admission admission) {
    assertThat(admission).isInstanceOf(Admission.Proceed.class);
    return ((Admission.Proceed) admission).lease();
  }

  @Test
  void aFinalFailureIsDeadLetteredAndThePollGoesOn() {
    String[] k = fresh("f", 3);
    MessageHandler<TestMessage> failSecond =
        (m, ctx) -> {
          if (key(m).equals(k[1])) {
            throw new FinalFailure("declined", "card declined");
          }
          ran.add(key(m));
        };

    List<Acknowledgement> acks = messages().processAll(keyed(k), failSecond);

    assertThat(acks.get(0)).isEqualTo(PROCESSED);
    assertThat(acks.get(1)).isInstanceOf(DeadLetter.class);
    assertThat(acks.get(2)).isEqualTo(PROCESSED);
    assertThat(stateOf(k[1])).isEqualTo(RecordState.FAILED_FINAL);
  }

  @Test
  void anOutcomeThatWasNotKeptEndsTheAnswersThere() {
    String[] k = fresh("o", 2);
    String lost = "lost-" + UUID.randomUUID();

    List<Acknowledgement> acks = messages().processAll(keyed(k[0], lost, k[1]), record);

    // The third ran and was recorded, but the stream must go back to the second: its answer is
    // dropped, and its redelivery is a duplicate.
    assertThat(acks).hasSize(2);
    assertThat(acks.get(0)).isEqualTo(PROCESSED);
    assertThat(acks.get(1)).isInstanceOf(Redeliver.class);
    assertThat(ran).containsExactly(k[0], lost, k[1]);
    assertThat(stateOf(k[1])).isEqualTo(RecordState.COMPLETED);
  }

  @Test
  void aFailureAfterAnOutcomeThatWasNotKeptIsNotRecorded() {
    String lost = "lost-" + UUID.randomUUID();
    String failing = "x-" + UUID.randomUUID();
    MessageHandler<TestMessage> failSecond =
        (m, ctx) -> {
          if (key(m).equals(failing)) {
            throw new FinalFailure("declined", "card declined");
          }
          ran.add(key(m));
        };

    List<Acknowledgement> acks = messages().processAll(keyed(lost, failing), failSecond);

    assertThat(acks).hasSize(1);
    assertThat(acks.get(0)).isInstanceOf(Redeliver.class);
    // Recorded as failed, its redelivery would be acknowledged as a duplicate and never
    // dead-lettered; abandoned, it runs again once its lease ends.
    assertThat(stateOf(failing)).isEqualTo(RecordState.IN_PROGRESS);
  }

  @Test
  void aMessageThatCannotBeIdentifiedIsLeftForTheNextCall() {
    String[] k = fresh("i", 3);
    MessageIdempotency<TestMessage> messages =
        MessageIdempotency.builder(once, TestMessage.READER)
            .scope(m -> key(m).equals(k[2]) ? null : SCOPE)
            .build();
    List<TestMessage> poll = keyed(k);

    List<Acknowledgement> acks = messages.processAll(poll, record);

    assertThat(acks).containsExactly(PROCESSED, PROCESSED);
    assertThatThrownBy(() -> messages.processAll(poll.subList(2, 3), record))
        .isInstanceOf(IllegalStateException.class);
  }

  @Test
  void anErrorFromAHandlerLeavesNoClaimOfThePollInFlight() {
    String[] k = fresh("e", 4);
    MessageHandler<TestMessage> overflowOnSecond =
        (m, ctx) -> {
          if (key(m).equals(k[1])) {
            throw new StackOverflowError("deep");
          }
          ran.add(key(m));
        };

    assertThatThrownBy(() -> messages().processAll(keyed(k), overflowOnSecond))
        .isInstanceOf(StackOverflowError.class);

    assertThat(ran).containsExactly(k[0]);
    // The one that threw was released by its failure; the two after it, which never ran, by the
    // batch: none is left to heartbeats that nobody would stop.
    assertThat(stateOf(k[1])).isNull();
    assertThat(stateOf(k[2])).isNull();
    assertThat(stateOf(k[3])).isNull();
  }

  @Test
  void anEmptyPollIsABug() {
    assertThatThrownBy(() -> messages().processAll(List.of(), record))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
