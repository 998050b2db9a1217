package dev.once.spring.kit;

import dev.once.http.kit.ReferenceApi;
import jakarta.servlet.http.HttpServletRequest;
import java.io.IOException;
import java.util.Map;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.http.HttpHeaders;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * A Spring Boot application that serves the kit's {@link ReferenceApi} from one catch-all
 * controller; nothing in it knows about idempotency: the starter guards it from properties alone.
 */
@SpringBootApplication
public class KitApplication {

  /**
   * Every path and method, handed to the reference API; its failure propagates as a handler's
   * would.
   */
  @RestController
  static class ReferenceController {

    private final ReferenceApi api;

    ReferenceController(ReferenceApi api) {
      this.api = api;
    }

    @RequestMapping("/**")
    ResponseEntity<byte[]> handle(HttpServletRequest request)
        throws IOException, InterruptedException {
      ReferenceApi.Reply reply =
          api.handle(
              new ReferenceApi.Call(
                  request.getMethod(),
                  request.getRequestURI(),
                  request.getQueryString(),
                  request.getInputStream().readAllBytes()));
      HttpHeaders headers = new HttpHeaders();
      for (Map.Entry<String, String> h : reply.headers()) {
        headers.add(h.getKey(), h.getValue());
      }
      return ResponseEntity.status(reply.status()).headers(headers).body(reply.body());
    }
  }
}
