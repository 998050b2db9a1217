package dev.once.client;

import java.net.http.HttpClient;
import java.net.http.HttpHeaders;
import java.net.http.HttpResponse;
import java.net.http.HttpResponse.BodySubscriber;
import java.net.http.HttpResponse.ResponseInfo;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Flow;

/**
 * Hands bytes that were already read to the caller's body handler, as if they came off the wire.
 */
final class Bodies {

  private Bodies() {}

  static <T> CompletionStage<T> replay(
      HttpResponse.BodyHandler<T> handler, HttpResponse<?> response, byte[] bytes) {
    BodySubscriber<T> subscriber =
        handler.apply(new Info(response.statusCode(), response.headers(), response.version()));
    subscriber.onSubscribe(
        new Flow.Subscription() {
          private boolean done;

          @Override
          public void request(long n) {
            if (done) {
              return;
            }
            done = true;
            if (n <= 0) {
              subscriber.onError(new IllegalArgumentException("request(" + n + ")"));
              return;
            }
            if (bytes.length > 0) {
              subscriber.onNext(List.of(ByteBuffer.wrap(bytes)));
            }
            subscriber.onComplete();
          }

          @Override
          public void cancel() {
            done = true;
          }
        });
    return subscriber.getBody();
  }

  private record Info(int statusCode, HttpHeaders headers, HttpClient.Version version)
      implements ResponseInfo {}
}
