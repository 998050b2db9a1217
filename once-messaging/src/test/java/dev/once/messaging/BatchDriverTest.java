package dev.once.messaging;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** The loop every broker consumer runs a batch through. */
class BatchDriverTest {

  private static final Acknowledgement ACK =
      new Acknowledgement.Ack(Acknowledgement.AckReason.PROCESSED);
  private static final Acknowledgement REDELIVER =
      new Acknowledgement.Redeliver(
          Duration.ZERO, Acknowledgement.RedeliverReason.TRANSIENT_FAILURE, null);

  private final List<String> settled = new ArrayList<>();
  private final List<String> failedAt = new ArrayList<>();
  private final List<Integer> calls = new ArrayList<>();

  /** A processor whose every processAll call answers what {@code answer} gives for its input. */
  private MessageProcessor<String> answering(Function<List<String>, List<Acknowledgement>> answer) {
    return new MessageProcessor<>() {
      @Override
      public Acknowledgement process(String message) {
        throw new AssertionError("a batch is not processed one at a time");
      }

      @Override
      public List<Acknowledgement> processAll(List<String> messages) {
        calls.add(messages.size());
        return answer.apply(messages);
      }
    };
  }

  private int drive(MessageProcessor<String> processor, String... messages) {
    return new BatchDriver<String>(
            processor,
            (m, e) -> {
              failedAt.add(m);
              return REDELIVER;
            },
            (m, a) -> {
              settled.add(m + (a == ACK ? ":ack" : ":redeliver"));
              return !m.startsWith("stop");
            })
        .drive(Arrays.asList(messages));
  }

  @Test
  void aPrefixAnswerIsFollowedByACallForTheRest() {
    int handed =
        drive(answering(ms -> List.of(ACK, ACK).subList(0, Math.min(2, ms.size()))), "a", "b", "c");

    assertThat(handed).isEqualTo(3);
    assertThat(calls).containsExactly(3, 1);
    assertThat(settled).containsExactly("a:ack", "b:ack", "c:ack");
  }

  @Test
  void theSettlerStopsTheBatchWhereItSays() {
    int handed = drive(answering(ms -> ms.stream().map(m -> ACK).toList()), "a", "stop-b", "c");

    assertThat(handed).isEqualTo(2);
    assertThat(settled).containsExactly("a:ack", "stop-b:ack");
  }

  @Test
  void aThrowingProcessorCostsTheFirstUnansweredMessageAndTheRestIsProcessedAgain() {
    int[] n = {0};
    int handed =
        drive(
            answering(
                ms -> {
                  if (n[0]++ == 0) {
                    throw new IllegalStateException("bug");
                  }
                  return ms.stream().map(m -> ACK).toList();
                }),
            "a",
            "b",
            "c");

    assertThat(handed).isEqualTo(3);
    assertThat(failedAt).containsExactly("a");
    assertThat(settled).containsExactly("a:redeliver", "b:ack", "c:ack");
    assertThat(calls).containsExactly(3, 2);
  }

  @Test
  void anEmptyTooLongOrNullAnswerIsTreatedAsAFailureOfTheFirstMessage() {
    drive(answering(ms -> List.of()), "a");
    drive(answering(ms -> List.of(ACK, ACK)), "b");
    drive(answering(ms -> Arrays.asList((Acknowledgement) null)), "c");

    assertThat(failedAt).containsExactly("a", "b", "c");
    assertThat(settled).containsExactly("a:redeliver", "b:redeliver", "c:redeliver");
  }
}
