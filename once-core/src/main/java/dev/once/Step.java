package dev.once;

import java.util.Arrays;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What the engine's rules ask for next: the answer they settled on, or the failure they pass on (a
 * step that is over is how it ended, a {@link Tried}); or one call ({@link Io}) and the rule that
 * reads how it ended; or some steps and the rule that goes on from theirs ({@link #handle}).
 *
 * <p>The rules that admit a request, hold a duplicate, finish a lease and turn a run into a verdict
 * are written once, as steps, with no I/O and no thread of their own. {@link #block} carries them
 * out on the caller's thread; {@link #start} as stages that hold no thread while a call is under
 * way. So the blocking and the asynchronous API run the same rules and cannot drift, and each
 * failure is handled in the one rule that reads it. A rule that throws ends its steps with what it
 * threw.
 *
 * <p>Both drivers keep the rules still to apply on a stack of their own, so steps that follow steps
 * cost one object each, however deep the rules nest, and a long wait never deepens the thread's
 * stack.
 */
abstract sealed class Step<R> permits Tried, Step.Call, Step.Then {

  Step() {}

  static <R> Step<R> done(R value) {
    return Tried.value(value);
  }

  static <R> Step<R> failed(Throwable failure) {
    return Tried.failure(failure);
  }

  /** Makes the call; its answer or failure is the steps'. */
  static <A> Step<A> call(Io<A> io) {
    return new IoCall<>(io, Step::over);
  }

  /** Makes the call, then goes on with what {@code then} makes of how it ended. */
  static <A, R> Step<R> call(Io<A> io, Function<Tried<A>, Step<R>> then) {
    return new IoCall<>(io, then);
  }

  private static <A> Step<A> over(Tried<A> tried) {
    return tried;
  }

  /** These steps, then {@code next} with how they ended. */
  final <S> Step<S> handle(Function<Tried<R>, Step<S>> next) {
    return new Then<>(this, next, null);
  }

  /** These steps, then {@code next} with their value; a failure passes on untouched. */
  final <S> Step<S> then(Function<? super R, Step<S>> next) {
    return new Then<>(this, null, next);
  }

  /**
   * Carries the steps out on this thread and returns their answer, or throws their failure: as it
   * is if unchecked, else (the user's work threw it) wrapped in {@link OperationFailedException}.
   */
  static <R> R block(Step<R> steps) {
    return ended(run(steps));
  }

  /**
   * The steps, carried out on this thread. A {@link Then}'s first steps are carried out by a call
   * of their own: the depth is that of the rules as written (a few), never that of a wait's rounds
   * or a write's attempts, which follow each other as the rule a call ends with.
   */
  private static <R> Tried<R> run(Step<R> steps) {
    Step<R> step = steps;
    while (true) {
      if (step instanceof Tried<R> end) {
        return end;
      }
      step = step instanceof Call<?, R> call ? call.block() : ((Then<?, R>) step).after();
    }
  }

  private static <R> R ended(Tried<R> end) {
    if (!end.failed()) {
      return end.value();
    }
    Throwable failure = end.failure();
    if (failure instanceof RuntimeException r) {
      throw r;
    }
    if (failure instanceof Error e) {
      throw e;
    }
    throw new OperationFailedException(failure);
  }

  /**
   * Carries the steps out as stages: the returned stage completes with their answer, or
   * exceptionally with their failure, including one thrown while {@code steps} made the first step.
   */
  static <R> CompletionStage<R> start(Supplier<Step<R>> steps) {
    Step<R> first;
    try {
      first = steps.get();
    } catch (RuntimeException | Error e) {
      return CompletableFuture.failedFuture(e);
    }
    return drive(first, new Rules());
  }

  /**
   * Goes on from {@code step} until a call has not answered yet, then again from its answer; the
   * rules are only ever touched by one thread at a time, each stage completing before the next.
   */
  private static <R> CompletionStage<R> drive(Step<?> step, Rules rules) {
    Step<?> s = step;
    while (true) {
      if (s instanceof Then<?, ?> then) {
        s = rules.push(then);
      } else if (s instanceof Call<?, ?> call) {
        CompletableFuture<Step<?>> next = call.start();
        if (!next.isDone()) {
          return next.thenCompose(answered -> drive(answered, rules));
        }
        s = next.join(); // answered already (a store in memory): go on, without a stage
      } else if (rules.isEmpty()) {
        Tried<R> end = Rules.result((Tried<?>) s);
        return end.failed()
            ? CompletableFuture.failedFuture(end.failure())
            : CompletableFuture.completedFuture(end.value());
      } else {
        s = rules.pop((Tried<?>) s);
      }
    }
  }

  /** Applies a rule; what it throws ends the steps as their failure. */
  private static <A, R> Step<R> apply(Function<Tried<A>, Step<R>> rule, Tried<A> tried) {
    try {
      return rule.apply(tried);
    } catch (RuntimeException | Error e) {
      return failed(e);
    }
  }

  /**
   * The rules still to apply as stages go on, innermost on top: each {@link Then} whose first steps
   * are under way.
   */
  private static final class Rules {
    private Then<?, ?>[] stack = new Then<?, ?>[4];
    private int size;

    Step<?> push(Then<?, ?> then) {
      if (size == stack.length) {
        stack = Arrays.copyOf(stack, size * 2);
      }
      stack[size++] = then;
      return then.first;
    }

    Step<?> pop(Tried<?> end) {
      Then<?, ?> then = stack[--size];
      stack[size] = null;
      return next(then, end);
    }

    @SuppressWarnings("unchecked") // the Then's rule reads how its own first steps ended
    private static <A> Step<?> next(Then<A, ?> then, Tried<?> end) {
      return then.from((Tried<A>) end);
    }

    boolean isEmpty() {
      return size == 0;
    }

    @SuppressWarnings("unchecked") // the outermost steps end as the steps the driver was given
    static <R> Tried<R> result(Tried<?> end) {
      return (Tried<R>) end;
    }
  }

  /**
   * Some steps, then the rule that goes on from how they ended ({@code next}), or from their value
   * only ({@code onValue}, a failure passing on untouched): exactly one of the two.
   */
  static final class Then<A, R> extends Step<R> {
    final Step<A> first;
    final @Nullable Function<Tried<A>, Step<R>> next;
    final @Nullable Function<? super A, Step<R>> onValue;

    Then(
        Step<A> first,
        @Nullable Function<Tried<A>, Step<R>> next,
        @Nullable Function<? super A, Step<R>> onValue) {
      this.first = first;
      this.next = next;
      this.onValue = onValue;
    }

    /** The first steps carried out on this thread, then the rule that goes on from them. */
    Step<R> after() {
      return from(run(first));
    }

    /** The rule that goes on from how the first steps ended. */
    Step<R> from(Tried<A> ended) {
      if (next != null) {
        return apply(next, ended);
      }
      if (ended.failed()) {
        return ended.passOn();
      }
      try {
        return Objects.requireNonNull(onValue).apply(ended.value());
      } catch (RuntimeException | Error e) {
        return failed(e);
      }
    }
  }

  /**
   * One call, in both of its forms, then the rule that reads how it ended. Most calls are an {@link
   * Io} and a function ({@link #call(Io, Function)}); the calls every request makes are written as
   * one object of their own, so that the hot path builds one object a call, not three.
   */
  abstract static non-sealed class Call<A, R> extends Step<R> {

    /** Makes the call on this thread and returns its answer; may throw anything, as work may. */
    abstract A answer() throws Throwable;

    /** Starts the call and returns the stage of its answer. */
    abstract CompletionStage<A> answerAsync();

    /** The rule that reads how the call ended. */
    abstract Step<R> then(Tried<A> ended);

    final Step<R> block() {
      Tried<A> tried;
      try {
        tried = Tried.value(answer());
      } catch (Throwable e) {
        tried = Tried.failure(e);
      }
      return next(tried);
    }

    /** The next step, once the call answered; never completes exceptionally. */
    final CompletableFuture<Step<?>> start() {
      CompletionStage<A> stage;
      try {
        stage = answerAsync();
      } catch (RuntimeException | Error e) {
        stage = CompletableFuture.failedFuture(e);
      }
      return stage
          .<Step<?>>handle(
              (value, failure) ->
                  next(failure == null ? Tried.value(value) : Tried.failure(Causes.of(failure))))
          .toCompletableFuture();
    }

    private Step<R> next(Tried<A> ended) {
      try {
        return then(ended);
      } catch (RuntimeException | Error e) {
        return failed(e);
      }
    }
  }

  /** A call made of an {@link Io} and a function. */
  private static final class IoCall<A, R> extends Call<A, R> {
    private final Io<A> io;
    private final Function<Tried<A>, Step<R>> then;

    IoCall(Io<A> io, Function<Tried<A>, Step<R>> then) {
      this.io = io;
      this.then = then;
    }

    @Override
    A answer() throws Throwable {
      return io.block();
    }

    @Override
    CompletionStage<A> answerAsync() {
      return io.start();
    }

    @Override
    Step<R> then(Tried<A> ended) {
      return then.apply(ended);
    }
  }
}
