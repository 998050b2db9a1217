package dev.once.webflux;

import java.util.Map;
import org.springframework.core.ResolvableType;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.http.codec.FormHttpMessageReader;
import org.springframework.http.codec.multipart.DefaultPartHttpMessageReader;
import org.springframework.http.codec.multipart.MultipartHttpMessageReader;
import org.springframework.http.codec.multipart.Part;
import org.springframework.http.server.reactive.ServerHttpRequest;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.http.server.reactive.ServerHttpResponse;
import org.springframework.util.LinkedMultiValueMap;
import org.springframework.util.MultiValueMap;
import org.springframework.web.server.ServerWebExchange;
import org.springframework.web.server.ServerWebExchangeDecorator;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The exchange the handler sees once the filter has read the request body: the body comes from
 * memory, as often as it is subscribed to, and so do the form and multipart data that WebFlux would
 * otherwise parse from the (already consumed) connection.
 */
final class BufferedExchange extends ServerWebExchangeDecorator {

  private static final ResolvableType FORM =
      ResolvableType.forClassWithGenerics(MultiValueMap.class, String.class, String.class);
  private static final ResolvableType MULTIPART =
      ResolvableType.forClassWithGenerics(MultiValueMap.class, String.class, Part.class);

  private final ServerHttpRequest request;
  private final ServerHttpResponse response;
  private final Mono<MultiValueMap<String, String>> form;
  private final Mono<MultiValueMap<String, Part>> multipart;

  private BufferedExchange(
      ServerWebExchange exchange, byte[] body, ServerHttpResponse response, int maxBytes) {
    super(exchange);
    this.request = new BufferedRequest(exchange.getRequest(), body);
    this.response = response;
    this.form = Mono.defer(() -> form(request, maxBytes)).cache();
    this.multipart = Mono.defer(() -> multipart(request, maxBytes)).cache();
  }

  /**
   * {@code exchange} with {@code body} as its request body and {@code response} as its response;
   * {@code maxBytes} bounds what the form readers hold (the body is no larger).
   */
  static ServerWebExchange of(
      ServerWebExchange exchange, byte[] body, ServerHttpResponse response, int maxBytes) {
    return new BufferedExchange(exchange, body, response, maxBytes);
  }

  @Override
  public ServerHttpRequest getRequest() {
    return request;
  }

  @Override
  public ServerHttpResponse getResponse() {
    return response;
  }

  @Override
  public Mono<MultiValueMap<String, String>> getFormData() {
    return form;
  }

  @Override
  public Mono<MultiValueMap<String, Part>> getMultipartData() {
    return multipart;
  }

  private static Mono<MultiValueMap<String, String>> form(ServerHttpRequest request, int max) {
    if (!isA(MediaType.APPLICATION_FORM_URLENCODED, request)) {
      return Mono.just(new LinkedMultiValueMap<>(0));
    }
    FormHttpMessageReader reader = new FormHttpMessageReader();
    reader.setMaxInMemorySize(max);
    return reader
        .readMono(FORM, request, Map.of())
        .switchIfEmpty(Mono.fromSupplier(() -> new LinkedMultiValueMap<>(0)));
  }

  private static Mono<MultiValueMap<String, Part>> multipart(ServerHttpRequest request, int max) {
    if (!isA(MediaType.MULTIPART_FORM_DATA, request)) {
      return Mono.just(new LinkedMultiValueMap<>(0));
    }
    DefaultPartHttpMessageReader parts = new DefaultPartHttpMessageReader();
    // Every part in memory: the body already is, and no part may go to a blocking disk write.
    parts.setMaxInMemorySize(max);
    return new MultipartHttpMessageReader(parts)
        .readMono(MULTIPART, request, Map.of())
        .switchIfEmpty(Mono.fromSupplier(() -> new LinkedMultiValueMap<>(0)));
  }

  private static boolean isA(MediaType type, ServerHttpRequest request) {
    MediaType contentType = request.getHeaders().getContentType();
    return contentType != null && type.isCompatibleWith(contentType);
  }

  /** The request with its body from memory. */
  private static final class BufferedRequest extends ServerHttpRequestDecorator {
    private final byte[] body;

    BufferedRequest(ServerHttpRequest request, byte[] body) {
      super(request);
      this.body = body;
    }

    @Override
    public Flux<DataBuffer> getBody() {
      return body.length == 0
          ? Flux.empty()
          : Flux.defer(() -> Flux.just(DefaultDataBufferFactory.sharedInstance.wrap(body)));
    }
  }
}
