package dev.once.gateway;

import dev.once.store.ForwardingStore;
import dev.once.store.IdempotencyStore;
import dev.once.store.RecordId;
import java.time.Duration;
import java.util.Map;

/**
 * A deliberately broken gateway, for proving that the chaos audit catches a broken guarantee: the
 * real gateway, but over a store that forgets every completion (it releases the key instead), so a
 * retry after a lost response runs the request again. Test wiring only: it lives in this module's
 * tests, in the gateway's package to reach its package-private start-up, and never changes the
 * gateway itself.
 */
public final class ForgetfulGateway {

  private ForgetfulGateway() {}

  public static void main(String[] args) throws Exception {
    GatewayConfig config = Cli.configure(Cli.parse(args), Map.of()).build();
    OpenStore opened = OpenStore.open(config);
    Gateway gateway = Gateway.start(config, new OpenStore(new Forgetful(opened.store()), opened));
    Runtime.getRuntime().addShutdownHook(new Thread(gateway::close, "forgetful-gateway-shutdown"));
    gateway.join();
  }

  /**
   * Completes by releasing: the record is gone, and the next request with the key executes afresh.
   */
  static final class Forgetful extends ForwardingStore {
    private final IdempotencyStore delegate;

    Forgetful(IdempotencyStore delegate) {
      this.delegate = delegate;
    }

    @Override
    protected IdempotencyStore delegate() {
      return delegate;
    }

    @Override
    public boolean complete(RecordId id, long token, byte[] result, Duration ttl) {
      return delegate.release(id, token);
    }

    @Override
    public void close() {
      // OpenStore closes the real store with its resources.
    }
  }
}
