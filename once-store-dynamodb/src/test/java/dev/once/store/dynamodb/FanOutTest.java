package dev.once.store.dynamodb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.once.store.StoreUnavailableException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The window the DynamoDB store's batches run in, without DynamoDB: the calls are futures. */
@Timeout(30)
class FanOutTest {

  private final FanOut fanOut = new FanOut(3, Duration.ofSeconds(2));

  @AfterEach
  void close() {
    fanOut.close();
  }

  private static List<Integer> numbers(int count) {
    return IntStream.range(0, count).boxed().toList();
  }

  /** Calls answered at once on the starting thread: the window loops instead of recursing. */
  @Test
  void aBatchOfCallsAnsweredAtOnceIsALoopNotARecursion() throws Exception {
    List<Integer> items = numbers(200_000);

    List<Integer> answers =
        fanOut
            .mapAsync(
                "test",
                items,
                i -> CompletableFuture.completedFuture(i * 2),
                (i, answer) -> CompletableFuture.completedFuture(null))
            .get(
                20,
                TimeUnit.SECONDS); // a recursion would lose its StackOverflowError in a callback

    assertThat(answers).hasSize(items.size());
    assertThat(answers.get(199_999)).isEqualTo(399_998);
  }

  @Test
  void atMostConcurrencyCallsOfABatchAreUnderWayAndTheAnswersKeepTheItemsOrder() {
    List<CompletableFuture<String>> started = new ArrayList<>();
    CompletableFuture<List<String>> answers =
        fanOut.mapAsync(
            "test",
            numbers(7),
            i -> {
              CompletableFuture<String> call = new CompletableFuture<>();
              started.add(call);
              return call;
            },
            (i, answer) -> CompletableFuture.completedFuture(null));

    assertThat(started).hasSize(3);
    started.get(2).complete("c");
    assertThat(started).as("one ended, one more started").hasSize(4);
    for (int i = 0; i < 7; i++) {
      started.get(i).complete(Character.toString('a' + i));
    }

    assertThat(answers.join()).containsExactly("a", "b", "c", "d", "e", "f", "g");
  }

  /**
   * The first failure starts nothing more; once the calls under way have ended, every answer there
   * was is undone, and only then does the batch fail, with the failure wrapped to name the batch.
   */
  @Test
  void theFirstFailureStopsTheBatchAndItFailsOnlyOnceItsAnswersAreUndone() {
    List<CompletableFuture<String>> started = new ArrayList<>();
    List<Integer> undone = new ArrayList<>();
    CompletableFuture<Void> undoing = new CompletableFuture<>();
    CompletableFuture<List<String>> answers =
        fanOut.mapAsync(
            "claimAll",
            numbers(10),
            i -> {
              CompletableFuture<String> call = new CompletableFuture<>();
              started.add(call);
              return call;
            },
            (i, answer) -> {
              undone.add(i);
              return undoing;
            });

    started.get(0).complete("granted");
    started.get(1).completeExceptionally(new StoreUnavailableException("the connection broke"));
    assertThat(answers).as("a call is still under way").isNotDone();
    started.get(2).complete("granted too");
    assertThat(started).as("calls started: three, and one when the first ended").hasSize(4);
    assertThat(answers).as("the fourth is still under way").isNotDone();
    started.get(3).complete("granted as well");

    assertThat(started).as("nothing started after the failure").hasSize(4);
    assertThat(undone).containsExactlyInAnyOrder(0, 2, 3);
    assertThat(answers).as("the undos are under way").isNotDone();
    undoing.complete(null);
    assertThat(answers).isCompletedExceptionally();
    assertThat(answers.handle((a, failure) -> failure).join())
        .isInstanceOf(StoreUnavailableException.class)
        .hasMessageContaining("claimAll of 10 items failed: the connection broke");
  }
}
