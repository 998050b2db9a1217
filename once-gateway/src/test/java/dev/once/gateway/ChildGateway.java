package dev.once.gateway;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The gateway as a separate process, {@code java -cp <test classpath> dev.once.gateway.Gateway
 * ...}, so a test can kill it with SIGKILL ({@link Process#destroyForcibly()}) and start it again.
 */
final class ChildGateway implements AutoCloseable {

  private static final Pattern STARTED =
      Pattern.compile("once-gateway started: proxy (http://\\S+) .* management (http://\\S+) ");

  private final Process process;
  private final URI uri;
  private final URI management;

  private ChildGateway(Process process, URI uri, URI management) {
    this.process = process;
    this.uri = uri;
    this.management = management;
  }

  /** Starts the process with a 256 MiB heap and waits (at most 60 s) until it is listening. */
  static ChildGateway start(List<String> args) throws IOException, InterruptedException {
    return start("256m", args);
  }

  /** Starts the process with this {@code -Xmx} and waits (at most 60 s) until it is listening. */
  static ChildGateway start(String heap, List<String> args)
      throws IOException, InterruptedException {
    return start(heap, List.of(), args);
  }

  /**
   * Starts the process with this {@code -Xmx} and these other JVM options ({@code -Dname=value}),
   * and waits (at most 60 s) until it is listening.
   */
  static ChildGateway start(String heap, List<String> jvmOptions, List<String> args)
      throws IOException, InterruptedException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.add("-Xmx" + heap);
    command.addAll(jvmOptions);
    command.addAll(List.of("-cp", System.getProperty("java.class.path"), Gateway.class.getName()));
    command.addAll(args);
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
    CompletableFuture<URI[]> started = new CompletableFuture<>();
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader in =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                for (String line; (line = in.readLine()) != null; ) {
                  System.out.println("[child gateway] " + line);
                  Matcher m = STARTED.matcher(line);
                  if (m.find()) {
                    started.complete(new URI[] {URI.create(m.group(1)), URI.create(m.group(2))});
                  }
                }
              } catch (IOException e) {
                // the process died; started stays incomplete and the caller times out below
              }
              started.completeExceptionally(
                  new IllegalStateException("the gateway process ended before it started"));
            },
            "child-gateway-output");
    reader.setDaemon(true);
    reader.start();
    try {
      URI[] uris = started.get(60, TimeUnit.SECONDS);
      return new ChildGateway(process, uris[0], uris[1]);
    } catch (Exception e) {
      process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
      throw new IllegalStateException("the gateway process did not start", e);
    }
  }

  URI uri() {
    return uri;
  }

  /** The management server: {@code /health}, {@code /metrics}. */
  URI management() {
    return management;
  }

  /** SIGKILL: no shutdown hook runs, nothing is flushed that was not already. */
  void kill() throws InterruptedException {
    process.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
  }

  @Override
  public void close() throws InterruptedException {
    if (process.isAlive()) {
      process.destroy();
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        kill();
      }
    }
  }
}
