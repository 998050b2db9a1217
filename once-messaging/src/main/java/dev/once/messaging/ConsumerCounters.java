package dev.once.messaging;

import java.util.concurrent.atomic.LongAdder;

/** Thread-safe counters a broker consumer keeps per delivery; read them with {@link #snapshot()}. */
public final class ConsumerCounters {

  private final LongAdder delivered = new LongAdder();
  private final LongAdder redelivered = new LongAdder();
  private final LongAdder processed = new LongAdder();
  private final LongAdder duplicates = new LongAdder();
  private final LongAdder redeliveries = new LongAdder();
  private final LongAdder deadLettered = new LongAdder();
  private final LongAdder rejected = new LongAdder();
  private final LongAdder failures = new LongAdder();

  /** Counts a delivery as it arrives. */
  public void delivered(boolean redelivery) {
    delivered.increment();
    if (redelivery) {
      redelivered.increment();
    }
  }

  /** Counts the acknowledgement a delivery got. */
  public void acknowledged(Acknowledgement a) {
    if (a instanceof Acknowledgement.Ack ack) {
      (ack.reason() == Acknowledgement.AckReason.DUPLICATE ? duplicates : processed).increment();
    } else if (a instanceof Acknowledgement.Redeliver) {
      redeliveries.increment();
    } else if (a instanceof Acknowledgement.DeadLetter) {
      deadLettered.increment();
    } else {
      rejected.increment();
    }
  }

  /** Counts a delivery whose acknowledgement could not be carried out. */
  public void failed() {
    failures.increment();
  }

  public ConsumerStats snapshot() {
    return new ConsumerStats(delivered.sum(), redelivered.sum(), processed.sum(), duplicates.sum(),
        redeliveries.sum(), deadLettered.sum(), rejected.sum(), failures.sum());
  }
}
