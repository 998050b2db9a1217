package dev.once.gateway;

/**
 * The proxy port as a core serves it ({@link ProxyCore}): {@link JettyPort} or {@link NettyProxy}.
 */
interface ProxyPort {

  /** Binds the port and serves {@code chain}. */
  void start(ProxyHandler chain) throws Exception;

  /**
   * Stops gracefully: no new connections or requests, those in flight get the stop timeout to
   * finish.
   */
  void stop() throws Exception;

  /** The bound port. */
  int port();

  /** Blocks until the port has stopped. */
  void join() throws InterruptedException;
}
