package dev.once.webflux;

import java.net.URI;
import java.time.Duration;
import java.util.List;
import org.springframework.http.codec.ServerCodecConfigurer;
import org.springframework.http.server.reactive.HttpHandler;
import org.springframework.http.server.reactive.ReactorHttpHandlerAdapter;
import org.springframework.web.server.WebFilter;
import org.springframework.web.server.WebHandler;
import org.springframework.web.server.adapter.WebHttpHandlerBuilder;
import org.springframework.web.server.handler.ResponseStatusExceptionHandler;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

/** A WebFlux application on Reactor Netty, on a free loopback port: the filters, then a handler. */
final class WebFluxServer implements AutoCloseable {

  private final DisposableServer server;

  private WebFluxServer(DisposableServer server) {
    this.server = server;
  }

  static WebFluxServer start(WebHandler handler, WebFilter... filters) {
    HttpHandler http =
        WebHttpHandlerBuilder.webHandler(handler)
            .filters(chain -> chain.addAll(List.of(filters)))
            // Created here rather than lazily on an event loop, as a Spring Boot application
            // creates it at startup: the first one reads its defaults from a file.
            .codecConfigurer(ServerCodecConfigurer.create())
            // What renders a ResponseStatusException's status in every WebFlux application.
            .exceptionHandler(new ResponseStatusExceptionHandler())
            .build();
    return new WebFluxServer(
        HttpServer.create()
            .host("127.0.0.1")
            .port(0)
            .handle(new ReactorHttpHandlerAdapter(http))
            .bindNow(Duration.ofSeconds(10)));
  }

  URI base() {
    return URI.create("http://127.0.0.1:" + server.port());
  }

  int port() {
    return server.port();
  }

  @Override
  public void close() {
    server.disposeNow(Duration.ofSeconds(10));
  }
}
