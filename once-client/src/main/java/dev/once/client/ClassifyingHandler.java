package dev.once.client;

import java.net.http.HttpResponse.BodyHandler;
import java.net.http.HttpResponse.BodySubscriber;
import java.net.http.HttpResponse.BodySubscribers;
import java.net.http.HttpResponse.ResponseInfo;

/**
 * Wraps the caller's body handler so that bodies the caller will never see are not handed to it: a
 * transient answer that will be retried is discarded, and a 409 or 422 problem is read first so
 * that its type can decide (it goes to the caller's handler afterwards if it is not Once's).
 */
final class ClassifyingHandler<T> implements BodyHandler<Reply<T>> {

  private final BodyHandler<T> handler;
  private final Retries.Mode mode;

  ClassifyingHandler(BodyHandler<T> handler, Retries.Mode mode) {
    this.handler = handler;
    this.mode = mode;
  }

  @Override
  public BodySubscriber<Reply<T>> apply(ResponseInfo info) {
    int status = info.statusCode();
    if (mode != Retries.Mode.UNSAFE && Retries.transientStatus(status)) {
      return BodySubscribers.replacing(new Reply.Discarded<>());
    }
    if (mode == Retries.Mode.KEYED
        && (status == 409 || status == 422)
        && ProblemJson.isProblem(info.headers())) {
      return BodySubscribers.mapping(
          BodySubscribers.ofByteArray(),
          bytes -> new Reply.Problem<>(ProblemJson.type(bytes), bytes));
    }
    return BodySubscribers.mapping(handler.apply(info), Reply.Body::new);
  }
}
