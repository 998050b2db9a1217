package dev.once.messaging;

/**
 * What a broker consumer has done since it started, by acknowledgement; a snapshot from {@link
 * ConsumerCounters#snapshot()}.
 *
 * @param delivered deliveries received
 * @param redelivered deliveries the broker marked as redelivered (an earlier delivery was not
 *     acknowledged: a consumer died or a channel closed), or, on SQS, received more than once
 * @param processed acknowledged after the handler ran ({@link Acknowledgement.AckReason#PROCESSED}
 *     or {@link Acknowledgement.AckReason#UNGUARDED})
 * @param duplicates acknowledged without running ({@link Acknowledgement.AckReason#DUPLICATE})
 * @param redeliveries sent back for later ({@link Acknowledgement.Redeliver})
 * @param deadLettered final failures ({@link Acknowledgement.DeadLetter})
 * @param rejected refused messages ({@link Acknowledgement.Reject})
 * @param failures deliveries whose acknowledgement itself failed (the broker will redeliver them)
 */
public record ConsumerStats(
    long delivered,
    long redelivered,
    long processed,
    long duplicates,
    long redeliveries,
    long deadLettered,
    long rejected,
    long failures) {}
