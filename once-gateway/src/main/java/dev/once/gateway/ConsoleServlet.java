package dev.once.gateway;

import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.Map;

/**
 * {@code GET /console}: the operations console, a static page over {@code /metrics} and the admin
 * API, mounted only where the admin API is. Its three files are read from the jar once. The page
 * holds no secret and needs no token to load (a browser cannot send one when it navigates): every
 * data call it makes carries the token the operator types, and the admin API checks it.
 *
 * <p>The headers keep a page that shows user input (scopes and keys) safe: a policy that runs only
 * this origin's script and style files, so markup that slipped into the page could neither run nor
 * restyle anything; no framing, so the release button cannot be clickjacked; no caching, no content
 * sniffing, no referrer.
 */
final class ConsoleServlet extends HttpServlet {

  private static final long serialVersionUID = 1L;

  static final String CONTENT_SECURITY_POLICY =
      "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self';"
          + " connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'none';"
          + " frame-ancestors 'none'";

  /** What is served, by path under {@code /console}; anything else is a 404. */
  private final transient Map<String, Asset> assets =
      Map.of(
          "/", Asset.load("index.html", "text/html; charset=utf-8"),
          "/console.js", Asset.load("console.js", "text/javascript; charset=utf-8"),
          "/console.css", Asset.load("console.css", "text/css; charset=utf-8"));

  @Override
  protected void doGet(HttpServletRequest request, HttpServletResponse response)
      throws IOException {
    Asset asset = assets.get(request.getPathInfo() == null ? "/" : request.getPathInfo());
    response.setHeader("Cache-Control", "no-store");
    response.setHeader("X-Content-Type-Options", "nosniff");
    if (asset == null) {
      response.setStatus(404);
      response.setContentType("application/json");
      response
          .getOutputStream()
          .write("{\"error\":\"not found\"}".getBytes(StandardCharsets.UTF_8));
      return;
    }
    response.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
    response.setHeader("X-Frame-Options", "DENY");
    response.setHeader("Referrer-Policy", "no-referrer");
    response.setContentType(asset.contentType);
    response.setContentLength(asset.bytes.length);
    response.getOutputStream().write(asset.bytes);
  }

  /** One file of the console, from {@code console/} beside this class. */
  private static final class Asset {
    final String contentType;
    final byte[] bytes;

    private Asset(String contentType, byte[] bytes) {
      this.contentType = contentType;
      this.bytes = bytes;
    }

    static Asset load(String name, String contentType) {
      String resource = "console/" + name;
      try (InputStream in = ConsoleServlet.class.getResourceAsStream(resource)) {
        if (in == null) {
          throw new IllegalStateException("the gateway's jar lacks " + resource);
        }
        return new Asset(contentType, in.readAllBytes());
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + resource, e);
      }
    }
  }
}
