package dev.once.webflux;

import dev.once.http.kit.ReferenceApi;
import java.util.Map;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.http.HttpStatusCode;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.WebHandler;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * The kit's {@link ReferenceApi} as a WebFlux handler: it reads the body as any handler would, runs
 * the API where blocking is allowed (its {@code slow} behaviour sleeps), and lets a {@link
 * ReferenceApi.HandlerFailure} propagate as an error signal.
 */
final class ReferenceHandler implements WebHandler {

  private final ReferenceApi api;

  ReferenceHandler(ReferenceApi api) {
    this.api = api;
  }

  @Override
  public Mono<Void> handle(ServerWebExchange exchange) {
    ServerHttpRequest request = exchange.getRequest();
    return DataBufferUtils.join(request.getBody())
        .map(
            joined -> {
              byte[] bytes = new byte[joined.readableByteCount()];
              joined.read(bytes);
              DataBufferUtils.release(joined);
              return bytes;
            })
        .defaultIfEmpty(new byte[0])
        .flatMap(
            body ->
                Mono.fromCallable(
                        () ->
                            api.handle(
                                new ReferenceApi.Call(
                                    request.getMethod().name(),
                                    request.getPath().pathWithinApplication().value(),
                                    request.getURI().getRawQuery(),
                                    body)))
                    .subscribeOn(Schedulers.boundedElastic()))
        .flatMap(reply -> write(exchange.getResponse(), reply));
  }

  static Mono<Void> write(ServerHttpResponse response, ReferenceApi.Reply reply) {
    response.setStatusCode(HttpStatusCode.valueOf(reply.status()));
    for (Map.Entry<String, String> h : reply.headers()) {
      response.getHeaders().add(h.getKey(), h.getValue());
    }
    response.getHeaders().setContentLength(reply.body().length);
    return response.writeWith(Mono.fromSupplier(() -> response.bufferFactory().wrap(reply.body())));
  }
}
