package dev.once.examples.payments;

import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Optional;
import org.springframework.web.filter.OncePerRequestFilter;

/**
 * Finds the merchant an {@code Api-Key} belongs to, before anything else runs: a request without a
 * valid key is refused with 401 and never reaches the idempotency filter or the ledger.
 */
final class ApiKeyFilter extends OncePerRequestFilter {

  static final String MERCHANT = "merchant";

  private final Ledger ledger;

  ApiKeyFilter(Ledger ledger) {
    this.ledger = ledger;
  }

  @Override
  protected void doFilterInternal(
      HttpServletRequest request, HttpServletResponse response, FilterChain chain)
      throws ServletException, IOException {
    String apiKey = request.getHeader("Api-Key");
    Optional<String> merchant = apiKey == null ? Optional.empty() : ledger.merchantOf(apiKey);
    if (merchant.isEmpty()) {
      byte[] body =
          ("{\"type\":\"https://payments.example/problems/unauthorized\",\"title\":\"Unauthorized\","
                  + "\"status\":401,\"detail\":\"Send your secret key in the Api-Key header.\"}")
              .getBytes(StandardCharsets.UTF_8);
      response.setStatus(401);
      response.setContentType("application/problem+json");
      response.setContentLength(body.length);
      response.getOutputStream().write(body);
      return;
    }
    request.setAttribute(MERCHANT, merchant.get());
    chain.doFilter(request, response);
  }
}
