package dev.once;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What the engine's rules ask for next: the answer they settled on (or the failure they pass on),
 * or one call ({@link Io}) and the rule that reads how it ended.
 *
 * <p>The rules that admit a request, hold a duplicate, finish a lease and turn a run into a verdict
 * are written once, as steps, with no I/O and no thread of their own. {@link #block} carries them
 * out on the caller's thread; {@link #start} as stages that hold no thread while a call is under
 * way. So the blocking and the asynchronous API run the same rules and cannot drift, and each
 * failure is handled in the one rule that reads it. A rule that throws ends its steps with what it
 * threw.
 */
abstract sealed class Step<R> {

  private Step() {}

  static <R> Step<R> done(R value) {
    return new Done<>(Tried.value(value));
  }

  static <R> Step<R> failed(Throwable failure) {
    return new Done<>(Tried.failure(failure));
  }

  /** Makes the call; its answer or failure is the steps'. */
  static <A> Step<A> call(Io<A> io) {
    return new Call<>(io, Step::of);
  }

  /** Makes the call, then goes on with what {@code then} makes of how it ended. */
  static <A, R> Step<R> call(Io<A> io, Function<Tried<A>, Step<R>> then) {
    return new Call<>(io, then);
  }

  private static <A> Step<A> of(Tried<A> tried) {
    return new Done<>(tried);
  }

  /** These steps, then {@code next} with how they ended. */
  abstract <S> Step<S> handle(Function<Tried<R>, Step<S>> next);

  /** These steps, then {@code next} with their value; a failure passes on untouched. */
  final <S> Step<S> then(Function<? super R, Step<S>> next) {
    return handle(t -> t.failed() ? failed(t.failure()) : next.apply(t.value()));
  }

  /**
   * Carries the steps out on this thread and returns their answer, or throws their failure: as it
   * is if unchecked, else (the user's work threw it) wrapped in {@link OperationFailedException}.
   */
  static <R> R block(Step<R> step) {
    Step<R> s = step;
    while (s instanceof Call<?, R> call) {
      s = call.block();
    }
    Tried<R> end = ((Done<R>) s).end;
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
   * exceptionally with their failure, including one thrown while {@code rules} made the first step.
   */
  static <R> CompletionStage<R> start(Supplier<Step<R>> rules) {
    Step<R> first;
    try {
      first = rules.get();
    } catch (RuntimeException | Error e) {
      return CompletableFuture.failedFuture(e);
    }
    return drive(first);
  }

  private static <R> CompletionStage<R> drive(Step<R> step) {
    if (step instanceof Call<?, R> call) {
      return call.start().thenCompose(Step::drive);
    }
    Tried<R> end = ((Done<R>) step).end;
    return end.failed()
        ? CompletableFuture.failedFuture(end.failure())
        : CompletableFuture.completedFuture(end.value());
  }

  /** Applies a rule; what it throws ends the steps as their failure. */
  private static <A, R> Step<R> apply(Function<Tried<A>, Step<R>> rule, Tried<A> tried) {
    try {
      return rule.apply(tried);
    } catch (RuntimeException | Error e) {
      return failed(e);
    }
  }

  private static final class Done<R> extends Step<R> {
    final Tried<R> end;

    Done(Tried<R> end) {
      this.end = end;
    }

    @Override
    <S> Step<S> handle(Function<Tried<R>, Step<S>> next) {
      return apply(next, end);
    }
  }

  private static final class Call<A, R> extends Step<R> {
    final Io<A> io;
    final Function<Tried<A>, Step<R>> then;

    Call(Io<A> io, Function<Tried<A>, Step<R>> then) {
      this.io = io;
      this.then = then;
    }

    @Override
    <S> Step<S> handle(Function<Tried<R>, Step<S>> next) {
      return new Call<>(io, tried -> apply(then, tried).handle(next));
    }

    Step<R> block() {
      Tried<A> tried;
      try {
        tried = Tried.value(io.blocking().call());
      } catch (Throwable e) {
        tried = Tried.failure(e);
      }
      return apply(then, tried);
    }

    CompletionStage<Step<R>> start() {
      CompletionStage<A> stage;
      try {
        stage = io.async().get();
      } catch (RuntimeException | Error e) {
        stage = CompletableFuture.failedFuture(e);
      }
      return stage.handle(
          (value, failure) ->
              apply(
                  then, failure == null ? Tried.value(value) : Tried.failure(Causes.of(failure))));
    }
  }
}
