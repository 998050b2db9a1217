package dev.once.messaging;

import java.util.concurrent.atomic.LongAdder;

/**
 * Thread-safe counters a broker consumer keeps per delivery; read them with {@link #snapshot()}.
 */
public final class ConsumerCounters {

  private final LongAdder delivered = new LongAdder();
  private final LongAdder redelivered = new LongAdder();
  private final LongAdder processed = new LongAdder();
  private final LongAdder duplicates = new LongAdder();
  private final LongAdder redeliveries = new LongAdder();
  private final LongAdder deadLettered = new LongAdder();
  private final LongAdder rejected = new LongAdder();
  private final LongAdder failures = new LongAdder();

  /**
   * The counter an acknowledgement increments; one visitor for all, so counting allocates nothing.
   */
  private final Acknowledgement.Visitor<LongAdder> counterOf =
      new Acknowledgement.Visitor<>() {
        @Override
        public LongAdder ack(Acknowledgement.Ack ack) {
          return ack.reason() == Acknowledgement.AckReason.DUPLICATE ? duplicates : processed;
        }

        @Override
        public LongAdder redeliver(Acknowledgement.Redeliver redeliver) {
          return redeliveries;
        }

        @Override
        public LongAdder deadLetter(Acknowledgement.DeadLetter deadLetter) {
          return deadLettered;
        }

        @Override
        public LongAdder reject(Acknowledgement.Reject reject) {
          return rejected;
        }
      };

  /** Counts a delivery as it arrives. */
  public void delivered(boolean redelivery) {
    delivered.increment();
    if (redelivery) {
      redelivered.increment();
    }
  }

  /** Counts the acknowledgement a delivery got. */
  public void acknowledged(Acknowledgement a) {
    a.accept(counterOf).increment();
  }

  /** Counts a delivery whose acknowledgement could not be carried out. */
  public void failed() {
    failures.increment();
  }

  public ConsumerStats snapshot() {
    return new ConsumerStats(
        delivered.sum(),
        redelivered.sum(),
        processed.sum(),
        duplicates.sum(),
        redeliveries.sum(),
        deadLettered.sum(),
        rejected.sum(),
        failures.sum());
  }
}
