package dev.once.store.dynamodb;

import java.util.Map;
import java.util.Objects;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.jspecify.annotations.Nullable;
import software.amazon.awssdk.services.dynamodb.model.AttributeValue;
import software.amazon.awssdk.services.dynamodb.model.GetItemResponse;

/**
 * Where an operation of the store stands: it has its answer, or it sends one more request and
 * decides from the reply what comes next. Each operation is written once as a function that returns
 * its first step (its conditions, the item it writes, what a failed condition's item means, when it
 * tries again); {@link Calls} drives the steps through the sync client for the blocking API, or
 * through the async client for the asynchronous one, so both APIs make the same decisions on the
 * same replies.
 */
final class Step<T> {

  /**
   * What follows a request, given its reply: for a conditional write {@code null} if it was
   * applied, else the item as it stood (empty if there was none); for a read, the item read (empty
   * if none). May throw, like the operation itself (a write that keeps losing races).
   */
  interface Then<T> {
    Step<T> after(@Nullable Map<String, AttributeValue> reply);
  }

  private final @Nullable T answer;
  private final @Nullable Request<?> request;
  private final @Nullable Then<T> then;

  private Step(@Nullable T answer, @Nullable Request<?> request, @Nullable Then<T> then) {
    this.answer = answer;
    this.request = request;
    this.then = then;
  }

  /** The operation is over: its answer. */
  static <T> Step<T> done(T answer) {
    return new Step<>(Objects.requireNonNull(answer, "answer"), null, null);
  }

  /** Sends {@code request}, then goes on as {@code then} says given the reply. */
  static <T> Step<T> send(Request<?> request, Then<T> then) {
    return new Step<>(null, request, then);
  }

  /** Reads an item, then goes on as {@code then} says given the item (empty if there is none). */
  static <T> Step<T> read(
      Request<GetItemResponse> read, Function<Map<String, AttributeValue>, Step<T>> then) {
    return send(read, item -> then.apply(Objects.requireNonNull(item, "a read's item")));
  }

  /** Takes the step apart: {@code done} with the answer, or {@code send} with the request. */
  @SuppressWarnings(
      "NullAway") // exactly one of answer and (request, then) is set: see the factories
  <R> R fold(Function<T, R> done, BiFunction<Request<?>, Then<T>, R> send) {
    return request == null ? done.apply(answer) : send.apply(request, then);
  }
}
